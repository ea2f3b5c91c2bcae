// `exocortex stdio` beside a running server is a byte relay over the upgraded admin connection
// (src/cli/stdio-relay.ts); the server serves it (src/host/mcp/stdio-relayed.ts). What the relay owes a
// client: answers to what it asked before closing stdin, a one-line reason when the server goes, and a start
// that loads neither the MCP SDK nor zod nor the command parser (nor YAML, once its config's card is written). What the server owes a stranger on the
// socket: a refusal for anything but a relay of its own protocol.
import t from 'tap';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { cliArgs } from '../../../src/host/testing/cli.js';
import { ADMIN_PROTOCOL, STDIO_RELAY_PATH, STDIO_UPGRADE } from '../../../src/host/admin/protocol.js';
import { relaySettings } from '../../../src/host/settings/relay-card.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const server = await startTestServer({ builtinDir: null, files: { 'a.md': 'a\n' } });
t.teardown(() => server.close());
const socketPath = server.host.admin?.socketPath;
if (!socketPath) throw new Error('the test server opened no admin channel');

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'relay-test', version: '1' } },
};

/** `exocortex stdio` against the test server, its output collected; `nodeArgs` go before the CLI's. */
function relay(nodeArgs: string[] = []) {
  const child = spawn(process.execPath, [...nodeArgs, ...cliArgs(), 'stdio', '--config', server.configFile], {
    cwd: root,
    env: { ...process.env, EXO_CONFIG: '' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? -1)));
  const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
  const answers = () =>
    stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id?: number; result?: Record<string, unknown> });
  const until = async (ok: () => boolean) => {
    const deadline = Date.now() + 30_000;
    while (!ok()) {
      if (Date.now() > deadline) throw new Error(`timed out; stderr: ${stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { child, exited, send, answers, until, stderr: () => stderr };
}

/** A request on the admin socket asking to upgrade, answered with its status and JSON body. */
function upgradeRequest(
  pathName: string,
  headers: Record<string, string>,
): Promise<{ status: number; error?: { code: string } }> {
  return new Promise((resolve, reject) => {
    const req = request({
      socketPath,
      path: pathName,
      headers: { host: 'exocortex.admin', connection: 'Upgrade', upgrade: STDIO_UPGRADE, ...headers },
    });
    req.once('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0 });
    });
    req.once('response', (res) => {
      let body = '';
      res.on('data', (d: Buffer) => {
        body += d.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ...(JSON.parse(body) as object) }));
    });
    req.once('error', reject);
    req.end();
  });
}

t.test('stdio-relay.drain: a client that closes stdin right after asking still gets every answer', async (t) => {
  const r = relay();
  r.send(initialize);
  r.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  r.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  r.send({ jsonrpc: '2.0', id: 3, method: 'ping' });
  r.child.stdin.end();
  t.equal(await r.exited, 0, 'the relay exits 0 once the server ended its side');
  const ids = r.answers().map((a) => a.id);
  t.same(ids.sort(), [1, 2, 3], 'initialize, tools/list and ping answered before the relay exits');
  t.match(r.stderr(), /bridging stdio to the running server \(PID \d+\)/);
});

t.test('stdio-relay.thin: the relay loads neither the MCP SDK, zod, the command parser nor PGlite', async (t) => {
  // The config's card, as the first relay of this config writes it: later relays read no YAML either. In a cache
  // directory of its own, where the suite's other files cannot push it out of the few cards kept.
  const env = { ...process.env, EXO_CONFIG: '', XDG_CACHE_HOME: path.join(server.dir, 'cache') };
  await relaySettings({ file: server.configFile, cwd: root, env });
  const log = path.join(server.dir, 'relay-imports.txt');
  const hook = pathToFileURL(path.join(root, 'test/fixtures/log-imports.mjs')).href;
  const child = spawn(process.execPath, ['--import', hook, ...cliArgs(), 'stdio', '--config', server.configFile], {
    cwd: root,
    env: { ...env, LOG_IMPORTS_TO: log },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stdin.write(`${JSON.stringify(initialize)}\n`);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const deadline = Date.now() + 30_000;
  while (!stdout.includes('"id":1') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.match(stdout, /"protocolVersion"/, 'initialize answered through the relay');
  child.stdin.end();
  await exited;
  const loaded = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  // The relay's own modules may not pass this hook (the sources' loader answers for them first); the
  // packages it loads do, and those are what the checks below are about.
  t.ok(
    loaded.includes('node:http'),
    `the log holds what the relay loads (node:http, for the upgrade): ${loaded.join(' ').slice(0, 400)}`,
  );
  for (const heavy of [
    '@modelcontextprotocol',
    '/zod/',
    '/commander/',
    '@electric-sql',
    '/ajv/',
    '/fastify/',
    '/yaml/',
  ])
    t.notOk(
      loaded.find((u) => u.includes(heavy)),
      `nothing of ${heavy} is loaded (${loaded.find((u) => u.includes(heavy)) ?? 'none'})`,
    );
});

t.test('stdio-relay.refusals: the upgrade is refused for another protocol, path or no vault', async (t) => {
  const vault = encodeURIComponent(server.vaultDir);
  const other = await upgradeRequest(STDIO_RELAY_PATH, {
    'x-exocortex-admin-protocol': String(ADMIN_PROTOCOL + 1),
    'x-exocortex-vault-path': vault,
  });
  t.equal(other.status, 426);
  t.equal(other.error?.code, 'protocol_mismatch');
  const nowhere = await upgradeRequest('/v1/keys', {
    'x-exocortex-admin-protocol': String(ADMIN_PROTOCOL),
    'x-exocortex-vault-path': vault,
  });
  t.equal(nowhere.status, 404);
  const unnamed = await upgradeRequest(STDIO_RELAY_PATH, { 'x-exocortex-admin-protocol': String(ADMIN_PROTOCOL) });
  t.equal(unnamed.status, 400);
  t.equal(unnamed.error?.code, 'bad_request');
  const ok = await upgradeRequest(STDIO_RELAY_PATH, {
    'x-exocortex-admin-protocol': String(ADMIN_PROTOCOL),
    'x-exocortex-vault-path': vault,
  });
  t.equal(ok.status, 101, 'the same request with the protocol and vault is upgraded');
});

// Last: it stops the server.
t.test('stdio-relay.gone: the server going away ends the relay with a reason and status 1', async (t) => {
  const r = relay();
  r.send(initialize);
  await r.until(() => r.answers().some((a) => a.id === 1));
  await server.close();
  t.equal(await r.exited, 1);
  t.match(r.stderr(), /went away; restart the client to reconnect/);
});
