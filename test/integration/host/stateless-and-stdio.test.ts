// The same host over stateless Streamable HTTP (a fresh server per request, no list_changed) and
// over stdio (a spawned `exocortex stdio` process, the local operator, list_changed delivered).
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, cpSync, writeFileSync, rmSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { refusalOf, textOf } from '../../../src/host/testing/testkit.js';
import { pgliteTemplate, startTestServer } from '../../../src/host/testing/harness.js';
import { cliArgs } from '../../../src/host/testing/cli.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const echo = path.resolve(here, '../../fixtures/families/echo');

t.test('stateless HTTP: calls work, GET is refused, no session id is issued', async (t) => {
  const server = await startTestServer({
    builtinDir: null,
    config: { plugins: [echo], server: { mode: 'stateless' } },
  });
  t.teardown(() => server.close());
  const client = await server.connect();
  const r = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
  t.same(r.structuredContent, { text: 'hi', length: 2, optional: false });
  t.equal(
    refusalOf(await client.callTool({ name: 'echo', arguments: { text: 'x', nope: 1 } }))!.code,
    'unknown_argument',
  );
  const res = await fetch(`${server.url}/mcp`, {
    headers: { authorization: `Bearer ${server.key}`, accept: 'text/event-stream' },
  });
  t.equal(res.status, 405);
  const init = await fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${server.key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    }),
  });
  t.equal(init.status, 200);
  t.equal(init.headers.get('mcp-session-id'), null);
  const body = (await init.json()) as { result: { instructions: string; protocolVersion: string } };
  t.match(body.result.instructions, /expected_hash/);
  t.equal(body.result.protocolVersion, '2025-11-25');
});

/** A vault with one note, a migrated embedded database and a config file naming them (plus `extra`), for a stdio process. */
async function stdioDir(t: Test, extra: Record<string, unknown> = {}) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-stdio-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(path.join(dir, 'vault'));
  writeFileSync(path.join(dir, 'vault', 'a.md'), 'a\n');
  cpSync(await pgliteTemplate(), path.join(dir, 'db'), { recursive: true });
  const configFile = path.join(dir, 'config.yaml');
  const config = {
    vault: { path: path.join(dir, 'vault') },
    database: { url: `pglite:${path.join(dir, 'db')}` },
    log: { level: 'warn' },
    ...extra,
  };
  writeFileSync(configFile, YAML.stringify(config));
  return { configFile, config };
}

t.test('stdio: the local operator lists and calls tools, and hears list_changed', async (t) => {
  const { configFile, config } = await stdioDir(t, { plugins: [echo] });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...cliArgs({ typescriptFamilies: true }), 'stdio', '--config', configFile],
    cwd: root,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'stdio-test', version: '1' });
  await client.connect(transport);
  t.teardown(() => client.close());
  t.match(client.getInstructions() ?? '', /Obsidian vault/);
  const names = (await client.listTools()).tools.map((x) => x.name);
  t.ok(names.includes('append_note'), 'the operator may write');
  const r = await client.callTool({ name: 'echo', arguments: { text: 'over stdio' } });
  t.equal(textOf(r), 'echo: over stdio (10 chars)');
  const w = await client.callTool({ name: 'append_note', arguments: { path: 'from-stdio.md', text: 'x' } });
  t.notOk(w.isError, textOf(w));

  let changed = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    changed++;
  });
  writeFileSync(configFile, YAML.stringify({ ...config, families: { echo: { enabled: false } } }));
  const end = Date.now() + 8000;
  while (changed === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  t.equal(changed, 1, 'list_changed arrived over stdio');
  const left = (await client.listTools()).tools.map((x) => x.name);
  t.notOk(left.includes('echo') || left.includes('append_note'), 'the echo family is gone');
});

t.test(
  'stdio: a client that closes stdin while the host is starting ends the process (it does not hold the database)',
  async (t) => {
    const { configFile } = await stdioDir(t);
    const child = spawn(process.execPath, [...cliArgs(), 'stdio', '--config', configFile], {
      cwd: root,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'leaves', version: '1' } },
    };
    child.stdin.end(`${JSON.stringify(initialize)}\n`);
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await exited;
    clearTimeout(timer);
    t.equal(code, 0, 'the process exits by itself, cleanly');
    t.match(stdout, /"id":1/, 'after answering what it was asked');
  },
);
