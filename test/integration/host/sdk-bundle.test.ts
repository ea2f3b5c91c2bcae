// The build bundles the host's two SDK modules (src/host/mcp/sdk.ts, sdk-node.ts) with the MCP SDK and zod
// (scripts/postbuild.mjs). What a built process must hold: neither module imports a package any more, the two
// share their chunks (one instance of each SDK class in a process that loads both), and neither holds or
// loads ajv (the SDK's validator loads it on its first schema). Skipped when dist/ is not built.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const built = path.join(root, 'dist/src/host/mcp');
const entries = ['sdk.js', 'sdk-node.js'].map((f) => path.join(built, f));

const importsOf = (file: string) =>
  ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((f) => f.fileName);

t.test(
  'the built SDK modules are bundles sharing one set of chunks',
  { skip: !existsSync(entries[0]) && 'dist/ is not built' },
  async (t) => {
    const [server, node] = entries.map(importsOf);
    for (const [name, imports] of [
      ['sdk.js', server],
      ['sdk-node.js', node],
    ] as const) {
      const packages = imports.filter((s) => !s.startsWith('./') && !builtinModules.includes(s.replace(/^node:/, '')));
      t.same(packages, [], `${name} imports no package`);
    }
    const chunks = server.filter((s) => s.startsWith('./sdk-chunks/'));
    t.ok(chunks.length > 0, 'sdk.js imports its shared chunk');
    for (const c of chunks) t.ok(node.includes(c), `sdk-node.js imports the same ${c}`);
    // The SDK's Node shim would import its ajv provider with the SDK; ours loads it on the first schema.
    for (const c of chunks)
      t.notMatch(readFileSync(path.join(built, c), 'utf8'), /checkStrictMode/, `${c} holds none of ajv's code`);
  },
);

t.test(
  'importing the bundles loads no SDK package and no ajv',
  { skip: !existsSync(entries[0]) && 'dist/ is not built' },
  async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-sdk-bundle-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const log = path.join(dir, 'imports.txt');
    const script = `
    import { createRequire } from 'node:module';
    const sdk = await import(${JSON.stringify(pathToFileURL(entries[0]).href)});
    const node = await import(${JSON.stringify(pathToFileURL(entries[1]).href)});
    const ajvLoaded = () => Object.keys(createRequire(import.meta.url).cache).filter((f) => /ajv/.test(f)).length > 0;
    const before = ajvLoaded();
    // A Server's default validator, as an elicitation answer meets it: ajv loads now, formats included.
    const server = new sdk.Server({ name: 'x', version: '1' }, { capabilities: {} });
    const check = server._jsonSchemaValidator.getValidator({ type: 'object', properties: { email: { type: 'string', format: 'email' } }, required: ['email'] });
    console.log(JSON.stringify({
      transport: typeof node.NodeStreamableHTTPServerTransport, before,
      valid: [check({ email: 'a@b.co' }).valid, check({ email: 'nope' }).valid, check({}).valid], after: ajvLoaded(),
    }));`;
    const r = spawnSync(
      process.execPath,
      [
        '--import',
        pathToFileURL(path.join(root, 'test/fixtures/log-imports.mjs')).href,
        '--input-type=module',
        '-e',
        script,
      ],
      { cwd: dir, env: { ...process.env, LOG_IMPORTS_TO: log }, encoding: 'utf8', timeout: 60_000 },
    );
    t.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim());
    t.same(out, { transport: 'function', before: false, valid: [true, false, false], after: true });
    const loaded = readFileSync(log, 'utf8')
      .split('\n')
      .filter((u) => u.includes('/node_modules/'));
    t.same(loaded, [], 'no module was resolved from node_modules');
  },
);
