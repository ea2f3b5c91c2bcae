// Finds family modules: built-ins under plugins/<name>/family.{js,ts}, third-party ones by npm
// package name or file path from the `plugins` setting. Imports them and checks the export.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { resolve as resolveImport } from 'import-meta-resolve';
import { isDefinedFamily, type DefinedFamily } from '../../sdk/define-family.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** plugins/ beside src/ (also under dist/ when compiled). */
export const BUILTIN_PLUGINS_DIR = path.resolve(HERE, '../../../plugins');
const EXT = import.meta.url.endsWith('.ts') ? '.ts' : '.js';

export interface FamilySource {
  /** How the operator named it (a built-in name, a package, a path). */
  readonly spec: string;
  readonly url: string;
  readonly builtin: boolean;
}

export function builtinSources(dir = BUILTIN_PLUGINS_DIR): FamilySource[] {
  if (!existsSync(dir)) return [];
  const out: FamilySource[] = [];
  for (const name of readdirSync(dir).sort()) {
    const file = path.join(dir, name, `family${EXT}`);
    if (statSync(path.join(dir, name)).isDirectory() && existsSync(file))
      out.push({ spec: name, url: pathToFileURL(file).href, builtin: true });
  }
  return out;
}

/** The built-ins, then the `plugins` setting's modules in its order; a plugin that cannot be found is a problem. */
export function familySources(
  plugins: readonly string[],
  baseDir: string,
  builtinDir?: string,
): { sources: FamilySource[]; problems: string[] } {
  const sources = builtinSources(builtinDir);
  const problems: string[] = [];
  for (const spec of plugins) {
    try {
      sources.push(pluginSource(spec, baseDir));
    } catch (e) {
      problems.push((e as Error).message);
    }
  }
  return { sources, problems };
}

export function pluginSource(spec: string, baseDir: string): FamilySource {
  if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('file:')) {
    const file = spec.startsWith('file:') ? fileURLToPath(spec) : path.resolve(baseDir, spec);
    if (!existsSync(file)) throw new Error(`plugins: "${spec}" does not exist (resolved to ${file})`);
    const target = statSync(file).isDirectory() ? resolveDirectoryEntry(file) : file;
    return { spec, url: pathToFileURL(target).href, builtin: false };
  }
  // Resolved as `import` would from the config's folder (then from the host's own), so packages whose
  // exports offer only an `import` condition are found as well as CommonJS-style ones.
  const attempts = [pathToFileURL(path.join(baseDir, 'package.json')).href, import.meta.url];
  for (const from of attempts) {
    try {
      return { spec, url: resolveImport(spec, from), builtin: false };
    } catch {
      // try the next base
    }
  }
  throw new Error(`plugins: package "${spec}" is not installed; run npm install ${spec} next to your config`);
}

function resolveDirectoryEntry(dir: string): string {
  for (const name of ['family.js', 'family.ts', 'index.js', 'index.ts']) {
    const f = path.join(dir, name);
    if (existsSync(f)) return f;
  }
  throw new Error(`plugins: folder ${dir} has no family.js, family.ts, index.js or index.ts`);
}

export async function importFamily(source: FamilySource): Promise<DefinedFamily> {
  const mod = (await import(source.url)) as { default?: unknown };
  if (!isDefinedFamily(mod.default)) {
    throw new Error(
      `${source.spec}: the module's default export is not a family (use defineFamily from exocortex/sdk)`,
    );
  }
  return mod.default;
}
