// Per-family scopes and per-user limits on a running server, minted and set through its admin channel
// (what `exocortex keys create --scope` and `exocortex users limits` send): tools/list shows a credential
// exactly the tools its scopes reach, a call outside them is refused naming the scope it needs; one
// user's rate limit and session cap do not touch another user; disabling a user ends their open
// subscriptions/listen stream.
import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { AdminClient } from '../../../src/host/admin/channel-client.js';
import type { KeyRow } from '../../../src/host/admin/operations.js';
import { parseRefusalLine } from '../../../src/sdk/refusals.js';
import { startTestServer } from '../../../src/host/testing/harness.js';

t.setTimeout(240_000);

const tmp = mkdtempSync(path.join(os.tmpdir(), 'exo-scopes-'));
const shared = path.join(tmp, 'shared');
mkdirSync(shared);
writeFileSync(path.join(shared, 'Shared.md'), '# Shared\n\n- [ ] a task\n');

const server = await startTestServer({ files: { 'Home.md': '# home\n\n- [ ] water the plants\n' } });
t.teardown(async () => {
  await server.close();
  rmSync(tmp, { recursive: true, force: true });
});
const admin = (await AdminClient.connect(server.host.admin!.socketPath))!;
t.teardown(() => admin.close());

const mint = async (name: string, scope: string, user?: string) =>
  (await admin.post<{ raw: string; key: KeyRow }>('/v1/keys', { name, scope, ...(user ? { user } : {}) })).raw;
const failure = async (p: Promise<unknown>) =>
  p.then(
    () => ({ code: 'none', message: '' }),
    (e: { code: string; message: string }) => ({ code: e.code, message: e.message }),
  );
type ToolAnswer = { isError?: boolean; content: Array<{ type: string; text?: string }> };
const refusalOf = (r: ToolAnswer) =>
  r.isError ? parseRefusalLine(r.content.map((c) => c.text ?? '').join('\n')) : undefined;

t.test('tools/list shows each credential exactly the tools its scopes reach', async (t) => {
  const everything = await server.connect();
  t.teardown(() => everything.close());
  const all = (await everything.listTools()).tools.map((x) => x.name);
  t.ok(
    all.includes('edit_note') && all.includes('update_task') && all.includes('list_files'),
    'a readwrite key sees write tools of every family',
  );

  const tasksWriter = await server.connect({ key: await mint('tasks-writer', 'read tasks:write') });
  t.teardown(() => tasksWriter.close());
  const mine = (await tasksWriter.listTools()).tools.map((x) => x.name);
  t.ok(mine.includes('update_task'), 'read tasks:write: the tasks write tool is listed');
  t.ok(mine.includes('read_note') && mine.includes('list_tasks'), 'and every read tool');
  t.notOk(mine.includes('edit_note') || mine.includes('create_note'), 'but no notes write tool');
  const edit = (await tasksWriter.callTool({
    name: 'edit_note',
    arguments: { path: 'Home.md', operation: 'append', content: 'x' },
  })) as ToolAnswer;
  t.equal(refusalOf(edit)?.code, 'read_only');
  t.match(edit.content[0]?.text, /needs the scope notes:write/, 'the refusal names the scope it needs');
  t.notMatch(edit.content[0]?.text, /is read-only/, 'and does not call a credential that writes tasks read-only');
  const updateTask = (await tasksWriter.listTools()).tools.find((x) => x.name === 'update_task');
  t.notMatch(
    updateTask?.description,
    /read-write credential/,
    'update_task names its scope, not a read-write credential',
  );
  t.match(updateTask?.description, /tasks:write/);
  const ticked = (await tasksWriter.callTool({
    name: 'update_task',
    arguments: { path: 'Home.md', line: 3, status: 'x' },
  })) as ToolAnswer;
  t.notOk(ticked.isError, `update_task runs (${ticked.content[0]?.text?.slice(0, 200)})`);

  const filesReader = await server.connect({ key: await mint('files-reader', 'files:read') });
  t.teardown(() => filesReader.close());
  const listed = (await filesReader.listTools()).tools;
  const families = new Set(listed.map((x) => server.host.manager.registry.findTool(x.name)?.generation.name));
  t.same([...families], ['files'], 'files:read lists the files family alone');
  t.notOk(
    listed.some((x) => x.annotations?.readOnlyHint === false),
    'and none of its write tools',
  );
  const read = (await filesReader.callTool({ name: 'read_note', arguments: { path: 'Home.md' } })) as ToolAnswer;
  t.equal(refusalOf(read)?.code, 'forbidden', 'a tool of another family is refused');
  t.match(read.content[0]?.text, /notes:read/);
  const resources = await filesReader.listResources();
  t.notOk(
    resources.resources.some((r) => r.uri.startsWith('vault://note/')),
    "no note resource reaches a credential without the notes family's scope",
  );
  const prompts = await filesReader.listPrompts();
  t.equal(prompts.prompts.length, 0, 'nor any prompt of the notes family');
});

t.test('scopes that are not scopes are refused when minting', async (t) => {
  for (const scope of ['notes:admin', 'write', '', 'Notes:read']) {
    const f = await failure(admin.post('/v1/keys', { name: 'bad', scope }));
    t.equal(f.code, 'invalid_arguments', `"${scope}" is refused`);
  }
  const keys = await admin.get<{ keys: KeyRow[] }>('/v1/keys');
  t.equal(
    keys.keys.find((k) => k.name === 'tasks-writer')?.scope,
    'read tasks:write',
    'keys list shows the scopes as minted',
  );
});

t.test("one user's limits are theirs: a rate limit and a session cap do not reach another user", async (t) => {
  await admin.post('/v1/vaults', { name: 'shared', root: shared, shared: true });
  await admin.post('/v1/users', { name: 'ana', vault: 'shared' });
  await admin.post('/v1/users', { name: 'ben', vault: 'shared' });
  const set = await admin.post<{ user: { limits: Record<string, unknown> } }>('/v1/users/limits', {
    name: 'ana',
    limits: { callsPerMinute: 3, sessions: 1 },
  });
  t.same(set.user.limits, { callsPerMinute: 3, sessions: 1 });
  t.equal(
    (await failure(admin.post('/v1/users/limits', { name: 'ana', limits: { callsPerMinute: -1 } }))).code,
    'invalid_arguments',
  );
  t.equal((await failure(admin.post('/v1/users/limits', { name: 'nobody', limits: {} }))).code, 'unknown_user');

  const ana1 = await mint('ana-1', 'read', 'ana');
  const ana2 = await mint('ana-2', 'read', 'ana');
  const ben = await mint('ben-1', 'read', 'ben');
  const codes = async (key: string, n: number) => {
    const client = await server.connect({ key });
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      const r = (await client.callTool({ name: 'list_notes', arguments: {} })) as ToolAnswer;
      out.push(refusalOf(r)?.code ?? 'ok');
    }
    await client.close();
    return out;
  };
  t.same(await codes(ana1, 2), ['ok', 'ok']);
  t.same(await codes(ana2, 2), ['ok', 'rate_limited'], "ana's second key shares her bucket of 3 a minute");
  t.same(await codes(ben, 5), ['ok', 'ok', 'ok', 'ok', 'ok'], 'ben, on the same vault, is not limited by her calls');

  const open = async (key: string) => {
    const res = await fetch(`${server.url}/mcp`, {
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
    return res.headers.get('mcp-session-id');
  };
  const ping = async (key: string, sid: string) =>
    (
      await fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': sid,
          'mcp-protocol-version': '2025-06-18',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
      })
    ).status;
  const first = (await open(ana1))!;
  const benSession = (await open(ben))!;
  const second = (await open(ana2))!;
  t.ok(first && second && benSession);
  t.equal(await ping(ana1, first), 404, "ana's first session gave way to her second (a cap of one session)");
  t.equal(await ping(ana2, second), 200);
  t.equal(await ping(ben, benSession), 200, "ben's session is untouched");
});

t.test('disabling a user ends their open subscriptions/listen stream', async (t) => {
  await admin.post('/v1/users', { name: 'cleo', vault: 'shared' });
  const key = await mint('cleo-1', 'read', 'cleo');
  const client = new ClientV2(
    { name: 'listener', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new HttpV2(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
  );
  t.teardown(() => client.close());
  const sub = await client.listen({ toolsListChanged: true });
  let ended: string | undefined;
  void sub.closed.then((how) => (ended = how));
  await new Promise((r) => setTimeout(r, 200));
  t.equal(ended, undefined, 'the stream is open');
  const r = await admin.post<{ sessionsClosed: number }>('/v1/users/disable', { name: 'cleo' });
  t.ok(r.sessionsClosed >= 1, 'the disable counts the stream it closed');
  const deadline = Date.now() + 10_000;
  while (ended === undefined && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
  t.equal(ended, 'remote', 'the client saw its stream end');
});
