// The import graph of the repository's own TypeScript and the floors it must respect (docs/architecture.md):
// which layer a file belongs to, and which of its imports cross a floor. The rules are a pure function of
// the graph, so a test can show they fail on a synthetic violation as well as pass on the real tree.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** One file's imports: repository-relative paths for our own files, the bare specifier for packages. */
export interface ImportEdge {
  readonly from: string;
  readonly specifier: string;
  /** Repository-relative path of the imported file (`.ts`), or null for a package import. */
  readonly to: string | null;
}

export type Layer =
  | { readonly kind: 'host' }
  | { readonly kind: 'testkit' }
  | { readonly kind: 'panel' }
  | { readonly kind: 'cli' }
  | { readonly kind: 'sdk' }
  | { readonly kind: 'markdown' }
  | { readonly kind: 'family'; readonly family: string }
  | { readonly kind: 'other' };

/** The public entries a family may import from outside its own folder. */
export const SDK_ENTRY = 'src/sdk/index.ts';
export const MARKDOWN_ENTRY = 'src/markdown/index.ts';
/** The one place the host may reach a family: the loader discovers families by path at run time. */
export const FAMILY_LOADER = 'src/host/families/';
/** What the CLI may import of the panel: the surface it hands to the host (the pages load behind it). */
export const PANEL_SURFACE = 'src/panel/surface.ts';

/** The only modules that import the MCP SDK's server side; the build bundles them (scripts/postbuild.mjs). */
export const MCP_SDK_MODULES = ['src/host/mcp/sdk.ts', 'src/host/mcp/sdk-node.ts', 'src/host/mcp/sdk-shims.ts'];
const MCP_SDK_PACKAGE = /^@modelcontextprotocol\/(server|node|core)(\/|$)/;

/** Known exceptions, each with why it stands; a test fails when one is no longer needed. */
export const EXCEPTIONS: ReadonlyArray<{ readonly from: string; readonly to: string; readonly why: string }> = [];

export function layerOf(file: string): Layer {
  const parts = file.split('/');
  if (parts[0] === 'plugins' && parts.length > 2) return { kind: 'family', family: parts[1] };
  // A built-in family's generated tool types live in src/generated/<family>: they are that family's own.
  if (parts[0] === 'src' && parts[1] === 'generated' && parts.length > 3) return { kind: 'family', family: parts[2] };
  // The test kit composes a whole server as an operator's process does (host, panel): a client of the host.
  if (parts[0] === 'src' && parts[1] === 'host' && parts[2] === 'testing') return { kind: 'testkit' };
  if (parts[0] === 'src' && parts[1] === 'host') return { kind: 'host' };
  if (parts[0] === 'src' && parts[1] === 'panel') return { kind: 'panel' };
  if (parts[0] === 'src' && parts[1] === 'cli') return { kind: 'cli' };
  if (parts[0] === 'src' && parts[1] === 'sdk') return { kind: 'sdk' };
  if (parts[0] === 'src' && parts[1] === 'markdown') return { kind: 'markdown' };
  return { kind: 'other' };
}

/** Every floor an edge crosses, as a sentence naming the rule; empty when the edge is allowed. */
export function edgeViolations(edge: ImportEdge): string[] {
  if (edge.to === null) {
    // Another module importing the SDK's server directly would load a second copy beside the bundle.
    return MCP_SDK_PACKAGE.test(edge.specifier) && !MCP_SDK_MODULES.includes(edge.from)
      ? [`${edge.from} imports ${edge.specifier}: the MCP SDK's server is imported only through src/host/mcp/sdk.ts`]
      : [];
  }
  if (EXCEPTIONS.some((e) => e.from === edge.from && e.to === edge.to)) return [];
  const from = layerOf(edge.from);
  const to = layerOf(edge.to);
  const out: string[] = [];
  const say = (rule: string) => out.push(`${edge.from} imports ${edge.to}: ${rule}`);
  switch (from.kind) {
    case 'family':
      if (to.kind === 'host' || to.kind === 'testkit' || to.kind === 'panel' || to.kind === 'cli')
        say('a family never imports the host');
      else if (to.kind === 'family' && to.family !== from.family) say('a family never imports another family');
      else if (to.kind === 'sdk' && edge.to !== SDK_ENTRY) say(`a family imports the SDK only through ${SDK_ENTRY}`);
      else if (to.kind === 'markdown' && edge.to !== MARKDOWN_ENTRY)
        say(`a family imports markdown only through ${MARKDOWN_ENTRY}`);
      break;
    case 'host':
      if (to.kind === 'family' && !edge.from.startsWith(FAMILY_LOADER))
        say('the host never imports a family (only the family loader reaches them, at run time)');
      else if (to.kind === 'panel') say('the host never imports the panel (it mounts the surfaces it is given)');
      else if (to.kind === 'cli') say('the host never imports a command (the CLI is a client of the host)');
      else if (to.kind === 'testkit') say('the host never imports the test kit');
      break;
    case 'testkit':
      if (to.kind === 'family') say('the test kit never imports a family (it loads them by path, as the host does)');
      else if (to.kind === 'cli') say('the test kit never imports a command (it runs the CLI as a process)');
      break;
    case 'panel':
      if (to.kind === 'family') say('the panel never imports a family (it calls their tools through the host)');
      else if (to.kind === 'cli') say('the panel never imports a command');
      else if (to.kind === 'testkit') say('the panel never imports the test kit');
      break;
    case 'cli':
      if (to.kind === 'family') say('the CLI never imports a family (family commands load through the host)');
      else if (to.kind === 'panel' && edge.to !== PANEL_SURFACE)
        say(`the CLI imports the panel only through ${PANEL_SURFACE}`);
      else if (to.kind === 'testkit') say('the CLI never imports the test kit');
      break;
    case 'sdk':
      if (to.kind === 'host' || to.kind === 'testkit' || to.kind === 'panel' || to.kind === 'cli')
        say('the SDK never imports the host');
      else if (to.kind === 'family') say('the SDK never imports a family');
      break;
    case 'markdown':
      if (to.kind !== 'markdown') say('markdown imports nothing of ours');
      break;
    case 'other':
      break;
  }
  return out;
}

export function violations(edges: Iterable<ImportEdge>): string[] {
  return [...edges].flatMap(edgeViolations);
}

/** Every `.ts` file under the given repository-relative folders (generated and test files included). */
export function sourceFiles(root: string, folders: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') walk(rel);
      } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(rel);
    }
  };
  for (const f of folders) walk(f);
  return out.sort();
}

/**
 * The imports of one file: static imports and re-exports (type-only included), dynamic `import()` with a
 * literal, and `import('…')` types. Relative specifiers resolve to the `.ts` file they name.
 */
export function importsOf(root: string, file: string): ImportEdge[] {
  const info = ts.preProcessFile(readFileSync(path.join(root, file), 'utf8'), true, true);
  return info.importedFiles.map(({ fileName: specifier }) => {
    if (!specifier.startsWith('.')) return { from: file, specifier, to: null };
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier));
    return { from: file, specifier, to: target.replace(/\.js$/, '.ts') };
  });
}

export function importGraph(root: string, folders: readonly string[]): ImportEdge[] {
  return sourceFiles(root, folders).flatMap((f) => importsOf(root, f));
}
