// One owner per embedded database, driven through the real binaries as an operator would: a running
// `serve` owns the PGlite directory; CLI commands reach it over the admin socket and take effect at once
// (a created key works, a revoked one gets 401 on its next request); a second server refuses; `stdio`
// bridges to the owner; a SIGKILLed owner's lock does not block the next start.
import t from 'tap';
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Agent, request } from 'undici';
import { pgliteTemplate } from '../../../src/host/testing/harness.js';
import { freePort } from '../../../src/host/testing/free-port.js';
import { textOf } from '../../../src/host/testing/testkit.js';
import { cliArgs } from '../../../src/host/testing/cli.js';
import { relayCardsFile, relaySettings } from '../../../src/host/settings/relay-card.js';

t.setTimeout(300_000); // every CLI call is a real process start

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-owner-'));
const dbDir = path.join(dir, 'db');
const socket = path.join(dbDir, 'exocortex.sock');
mkdirSync(path.join(dir, 'vault'));
writeFileSync(path.join(dir, 'vault', 'Start.md'), '# Start\n\nA note that was here before.\n');
cpSync(await pgliteTemplate(), dbDir, { recursive: true });
const port = await freePort();
const configFile = path.join(dir, 'config.yaml');
writeFileSync(
  configFile,
  YAML.stringify({
    vault: { path: path.join(dir, 'vault') },
    database: { url: `pglite:${dbDir}` },
    server: { port },
    auth: { mintAdminKeyOnFirstStart: false },
    log: { level: 'warn' },
  }),
);
const base = `http://127.0.0.1:${port}`;
// The server, the CLI and the card check share a cache directory of their own: the relay cards are the few most
// recent configs, and the suite's other files, writing theirs meanwhile, would push this file's card out.
const env = { ...process.env, EXO_CONFIG: '', XDG_CACHE_HOME: path.join(dir, 'cache') };
const children: ChildProcess[] = [];
t.teardown(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...cliArgs(), ...args, '--config', configFile],
      { cwd: root, env },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

function serve(): ChildProcess {
  const child = spawn(process.execPath, [...cliArgs(), 'serve', '--config', configFile], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  return child;
}

async function untilUp(): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (existsSync(socket)) {
      try {
        if ((await fetch(`${base}/health`)).ok) return;
      } catch {
        // not listening yet
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('server did not come up');
}

/** The status of an initialize POST with this bearer key (no SDK retries in the way). */
async function initializeStatus(key: string): Promise<number> {
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
    }),
  });
  await res.body?.cancel();
  return res.status;
}

async function httpClient(key: string): Promise<Client> {
  const client = new Client({ name: 'http-peer', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

let server = serve();
await untilUp();

t.test("the server writes its config's relay card: the first stdio beside it reads no YAML", async (t) => {
  const deadline = Date.now() + 10_000;
  let cards: Array<{ settings: { file: string; socketPath?: string; vaultName: string } }> = [];
  while (Date.now() < deadline) {
    cards = existsSync(relayCardsFile(env)) ? JSON.parse(readFileSync(relayCardsFile(env), 'utf8')) : [];
    if (cards.some((c) => c.settings.file === configFile)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const card = cards.find((c) => c.settings.file === configFile);
  t.ok(card, 'a card for the config the server was started with');
  t.equal(card?.settings.socketPath, socket, 'naming its admin socket');
  t.same(card?.settings, await relaySettings({ file: configFile, cwd: root, env }), 'what a relay from here reads');
  const after: typeof cards = JSON.parse(readFileSync(relayCardsFile(env), 'utf8'));
  t.equal(after.filter((c) => c.settings.file === configFile).length, 1, 'from that card: it wrote no second one');
});

t.test('keys created, listed and revoked through the running server take effect at once', async (t) => {
  const created = await cli('keys', 'create', '--name', 'reader', '--scope', 'readwrite');
  t.equal(created.code, 0, created.stderr);
  const key = created.stdout.trim();
  t.match(key, /^exo_/);
  t.equal(await initializeStatus(key), 200, 'the new key works on the very next request');
  const listed = await cli('keys', 'list');
  t.match(listed.stdout, /reader\texo_.{6}…\treadwrite\tactive/);
  const revoked = await cli('keys', 'revoke', 'reader');
  t.equal(revoked.code, 0, revoked.stderr);
  t.match(revoked.stderr, /revoked 1 key/);
  t.equal(await initializeStatus(key), 401, 'the revoked key is refused on its next request');
  const unknown = await cli('keys', 'revoke', 'nobody-by-that-name');
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /no active key matches "nobody-by-that-name"/);
  t.match((await cli('keys', 'list')).stdout, /reader\t.*\trevoked/);
});

t.test('a second server on the same directory refuses, naming the directory and the owner', async (t) => {
  const second = spawn(process.execPath, [...cliArgs(), 'serve', '--config', configFile], {
    cwd: root,
    env,
  });
  let stderr = '';
  second.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise<number>((resolve) => second.on('exit', (c) => resolve(c ?? -1)));
  t.equal(code, 2);
  t.match(
    stderr,
    new RegExp(`the database ${dbDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by PID ${server.pid}`),
  );
  t.equal(stderr.trim().split('\n').length, 1, 'one line');
  t.equal(await initializeStatus('exo_nothing'), 401, 'the owner still serves');
});

t.test('index, family commands, doctor and migrate run in the owner', async (t) => {
  const index = await cli('index');
  t.equal(index.code, 0, index.stderr);
  t.match(index.stderr, /indexed \d+: 0 written, 0 renamed, 0 removed, [1-9]\d* unchanged/);
  const rebuild = await cli('search', 'rebuild-keyword');
  t.equal(rebuild.code, 0, rebuild.stderr);
  t.match(rebuild.stderr, /rebuilt keyword vectors of \d+ notes/);
  const doctor = await cli('doctor');
  t.match(doctor.stdout, new RegExp(`ok {3}database: pglite owned by the running server \\(PID ${server.pid}`));
  const migrate = await cli('migrate');
  t.equal(migrate.code, 0);
  t.match(migrate.stderr, /the running server \(PID \d+\) applied migrations/);
});

t.test('stdio bridges to the running server as the local operator', async (t) => {
  const keyOut = await cli('keys', 'create', '--name', 'watcher', '--scope', 'read');
  const peer = await httpClient(keyOut.stdout.trim());
  t.teardown(() => peer.close());
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...cliArgs(), 'stdio', '--config', configFile],
    cwd: root,
    stderr: 'pipe',
    env: env as Record<string, string>,
  });
  const local = new Client({ name: 'desktop', version: '1' });
  await local.connect(transport);
  t.teardown(() => local.close());
  const names = (await local.listTools()).tools.map((x) => x.name);
  t.ok(names.includes('create_note'), 'the operator may write');
  const made = await local.callTool({
    name: 'create_note',
    arguments: { path: 'From Desktop.md', content: '# From Desktop\n\nbridged\n' },
  });
  t.notOk(made.isError, textOf(made));
  const read = await peer.callTool({ name: 'read_note', arguments: { path: 'From Desktop.md' } });
  t.match(textOf(read), /bridged/, 'the HTTP client sees the note at once');
  const changes = textOf(await peer.callTool({ name: 'get_changes', arguments: { since: 'ev:0', limit: 500 } }));
  t.match(changes, /created "From Desktop\.md" by operator/, 'the change feed names the operator');
  const lock = JSON.parse(readFileSync(path.join(dbDir, 'exocortex.lock'), 'utf8')) as { pid: number };
  t.equal(lock.pid, server.pid, 'the bridge never took the database');
});

t.test('a 2026-07-28 stdio client through the bridge: discover, list, write', async (t) => {
  const { Client: ModernClient } = await import('@modelcontextprotocol/client');
  const { StdioClientTransport: ModernStdio } = await import('@modelcontextprotocol/client/stdio');
  const local = new ModernClient(
    { name: 'modern-desktop', version: '1' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await local.connect(
    new ModernStdio({
      command: process.execPath,
      args: [...cliArgs(), 'stdio', '--config', configFile],
      cwd: root,
      stderr: 'pipe',
      env: env as Record<string, string>,
    }),
  );
  t.teardown(() => local.close());
  t.equal(local.getProtocolEra(), 'modern');
  t.ok((await local.listTools()).tools.some((x) => x.name === 'create_note'));
  const made = (await local.callTool({
    name: 'create_note',
    arguments: { path: 'From Modern.md', content: '# From a 2026 client\n' },
  })) as { isError?: boolean };
  t.notOk(made.isError, 'the write went through the owner');
  t.ok(existsSync(path.join(dir, 'vault', 'From Modern.md')), 'the note is in the vault');
});

t.test('an admin socket open to others, or a CLI of another protocol, is refused and changes nothing', async (t) => {
  const agent = new Agent({ connect: { socketPath: socket } });
  t.teardown(() => agent.close());
  const res = await request('http://x/v1/keys', {
    dispatcher: agent,
    headers: { 'x-exocortex-admin-protocol': '999' },
  });
  t.equal(res.statusCode, 426);
  t.match(((await res.body.json()) as { error: { code: string } }).error.code, 'protocol_mismatch');
  chmodSync(socket, 0o666);
  t.teardown(() => chmodSync(socket, 0o600));
  const out = await cli('keys', 'create', '--name', 'sneaky');
  t.equal(out.code, 2);
  t.match(out.stderr, /open to other users \(mode 666\); refusing to use it/);
  chmodSync(socket, 0o600);
  t.notMatch((await cli('keys', 'list')).stdout, /sneaky/);
});

t.test('a SIGKILLed owner leaves no lock that blocks the next start', async (t) => {
  server.kill('SIGKILL');
  await new Promise((r) => server.once('exit', r));
  t.ok(existsSync(socket), 'the dead owner left its socket file behind');
  server = serve();
  await untilUp();
  const created = await cli('keys', 'create', '--name', 'after-crash', '--scope', 'read');
  t.equal(created.code, 0, created.stderr);
  t.equal(await initializeStatus(created.stdout.trim()), 200);
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  const offline = await cli('keys', 'list');
  t.equal(offline.code, 0, offline.stderr);
  t.match(offline.stdout, /after-crash/, 'with no server the CLI opens the database itself');
});
