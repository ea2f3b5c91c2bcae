// The floors of the house, as a test (docs/architecture.md): families never import the host, the host
// never imports a family except through the loader, nor the panel, a command or the test kit (they are its
// clients), no family imports another, markdown imports nothing of ours, the SDK never imports the host, and
// a built-in family reaches the SDK only through its public entry, as a third-party family must; and only
// src/host/mcp/sdk.ts and its siblings import the MCP SDK's server (the build bundles them). The rules are
// checked on synthetic graphs too, so that a test that passes is known to be able to fail.
import path from 'node:path';
import t from 'tap';
import { EXCEPTIONS, type ImportEdge, edgeViolations, importGraph, importsOf, violations } from './import-graph.js';

const root = path.resolve(import.meta.dirname, '../../..');
const graph = importGraph(root, ['src', 'plugins']);

t.test('the repository respects every floor', async (t) => {
  t.ok(graph.length > 500, `the graph was read (${graph.length} imports)`);
  t.same(violations(graph), []);
});

t.test('every exception is still needed', async (t) => {
  for (const e of EXCEPTIONS)
    t.ok(
      graph.some((edge) => edge.from === e.from && edge.to === e.to),
      `${e.from} → ${e.to} still exists (otherwise drop the exception)`,
    );
});

t.test('imports are read in every form: type-only, re-export, dynamic, import() type', async (t) => {
  const edges = importsOf(root, 'src/host/health.ts').map((e) => e.to);
  t.ok(edges.includes('src/host/metrics/index.ts'), 'an import() type is an edge');
  const kit = importsOf(root, 'src/host/testing/testkit.ts').map((e) => e.to);
  t.ok(kit.includes('src/sdk/refusals.ts'), 'a relative .js specifier resolves to its .ts file');
  const entry = importsOf(root, 'src/sdk/index.ts').map((e) => e.to);
  t.ok(entry.includes('src/sdk/define-tool.ts'), 'a re-export is an edge');
});

const edge = (from: string, to: string): ImportEdge => ({ from, specifier: to, to });

t.test('each rule fails on a violation', async (t) => {
  const cases: Array<[ImportEdge, RegExp]> = [
    [edge('plugins/notes/family.ts', 'src/host/vault/vault-fs.ts'), /a family never imports the host/],
    [edge('plugins/notes/tools/x.ts', 'plugins/search/filters.ts'), /a family never imports another family/],
    [edge('plugins/notes/tools/x.ts', 'src/generated/search/index.ts'), /a family never imports another family/],
    [edge('plugins/notes/tools/x.ts', 'src/sdk/query/index.ts'), /only through src\/sdk\/index.ts/],
    [edge('plugins/notes/tools/x.ts', 'src/markdown/links.ts'), /only through src\/markdown\/index.ts/],
    [edge('src/host/mcp/server-factory.ts', 'plugins/notes/family.ts'), /the host never imports a family/],
    [edge('src/host/http/app.ts', 'src/panel/server.ts'), /the host never imports the panel/],
    [edge('src/host/host.ts', 'src/panel/surface.ts'), /the host never imports the panel/],
    [edge('src/host/admin/operations.ts', 'src/cli/main.ts'), /the host never imports a command/],
    [edge('src/host/families/manager.ts', 'src/cli/family-command.ts'), /the host never imports a command/],
    [edge('src/host/mcp/server-factory.ts', 'src/host/testing/harness.ts'), /the host never imports the test kit/],
    [edge('src/panel/routes-users.ts', 'src/cli/users.ts'), /the panel never imports a command/],
    [edge('src/panel/routes-notes.ts', 'plugins/notes/family.ts'), /the panel never imports a family/],
    [edge('src/cli/main.ts', 'src/panel/server.ts'), /the CLI imports the panel only through src\/panel\/surface.ts/],
    [edge('src/cli/main.ts', 'plugins/search/family.ts'), /the CLI never imports a family/],
    [edge('src/host/testing/harness.ts', 'plugins/notes/family.ts'), /the test kit never imports a family/],
    [edge('plugins/notes/family.ts', 'src/panel/html.ts'), /a family never imports the host/],
    [edge('plugins/notes/family.ts', 'src/host/testing/harness.ts'), /a family never imports the host/],
    [edge('src/sdk/define-tool.ts', 'src/host/families/dispatch.ts'), /the SDK never imports the host/],
    [edge('src/sdk/define-tool.ts', 'src/cli/main.ts'), /the SDK never imports the host/],
    [edge('src/sdk/define-tool.ts', 'plugins/search/family.ts'), /the SDK never imports a family/],
    [edge('src/markdown/links.ts', 'src/sdk/index.ts'), /markdown imports nothing of ours/],
    [edge('src/markdown/links.ts', 'src/host/log/logger.ts'), /markdown imports nothing of ours/],
  ];
  const pkg = (from: string, specifier: string): ImportEdge => ({ from, specifier, to: null });
  cases.push([
    pkg('src/host/mcp/server-factory.ts', '@modelcontextprotocol/server'),
    /only through src\/host\/mcp\/sdk.ts/,
  ]);
  cases.push([pkg('src/cli/serve.ts', '@modelcontextprotocol/server/stdio'), /only through src\/host\/mcp\/sdk.ts/]);
  cases.push([
    pkg('src/host/mcp/http-transport.ts', '@modelcontextprotocol/node'),
    /only through src\/host\/mcp\/sdk.ts/,
  ]);
  for (const [e, rule] of cases) {
    const found = edgeViolations(e);
    t.equal(found.length, 1, `${e.from} → ${e.to} is refused`);
    t.match(found[0], rule);
  }
  // And one violation in an otherwise clean graph makes the whole check fail.
  t.equal(violations([...graph, cases[0][0]]).length, 1);
});

t.test('what the floors allow', async (t) => {
  const allowed: ImportEdge[] = [
    edge('plugins/notes/tools/x.ts', 'src/sdk/index.ts'),
    edge('plugins/notes/tools/x.ts', 'src/markdown/index.ts'),
    edge('plugins/notes/tools/x.ts', 'plugins/notes/lib/listing.ts'),
    edge('plugins/notes/tools/x.ts', 'src/generated/notes/index.ts'),
    edge('src/host/families/discover.ts', 'plugins/notes/family.ts'),
    edge('src/host/mcp/server-factory.ts', 'src/sdk/refusals.ts'),
    edge('src/panel/context.ts', 'src/host/admin/operations.ts'),
    { from: 'src/host/mcp/sdk.ts', specifier: '@modelcontextprotocol/server', to: null },
    { from: 'src/host/testing/harness.ts', specifier: '@modelcontextprotocol/client', to: null },
    edge('src/cli/main.ts', 'src/host/admin/operations.ts'),
    edge('src/cli/serve.ts', 'src/panel/surface.ts'),
    edge('src/host/testing/harness.ts', 'src/panel/surface.ts'),
    edge('src/sdk/link-moves.ts', 'src/markdown/rewrite-links.ts'),
    edge('src/markdown/links.ts', 'src/markdown/tokens.ts'),
    { from: 'src/markdown/links.ts', specifier: 'unified', to: null },
  ];
  for (const e of allowed) t.same(edgeViolations(e), [], `${e.from} → ${e.to}`);
});
