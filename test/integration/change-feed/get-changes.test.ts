// The change feed end to end: events from index operations (create, modify, move, delete), attribution
// and the by= filters, folder/kinds filters, cursor rules, retention, the vault://changes resource, and
// a cursor that survives a server restart without loss or repetition.
import t from 'tap';
import { createHash } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { refusalOf as refusalOfResult, textOf as textOfResult } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { Host } from '../../../src/host/host.js';
import { loadSettings } from '../../../src/host/settings/load.js';
import { createLogger } from '../../../src/host/log/logger.js';
import type { IndexService } from '../../../src/sdk/index-service.js';
import { prune } from '../../../plugins/change-feed/contributor.js';
import type { Output } from '../../../plugins/change-feed/tools/get_changes.js';

// The SDK's callTool result type is wider than the test kit's parameter; these narrow it once.
const textOf = (r: unknown): string => textOfResult(r as { content?: unknown });
const refusalOf = (r: unknown) => refusalOfResult(r as { isError?: boolean; content?: unknown });

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const server = await startTestServer({
  builtinDir: null,
  config: {
    plugins: [path.join(root, 'plugins/change-feed')],
    changeFeed: { pruneEvery: 1000 },
    index: { watch: false, reconcileSeconds: 0 },
  },
});
let host: Host = server.host;
t.teardown(async () => {
  await host.close().catch(() => undefined);
  rmSync(server.dir, { recursive: true, force: true });
});
let client = await server.connect();
const vaultId = host.vaultHandle.id;
await (host.services.named.get('index') as IndexService).whenReady(vaultId);
const db = () => host.database.db;
const _hash = (s: string) => `sha256:${createHash('sha256').update(s).digest('hex')}`;

async function prevOf(p: string) {
  const r = (
    await sql<{
      id: string;
      content_hash: string;
      size: number;
      mtime: Date;
    }>`SELECT id, content_hash, size, mtime FROM notes WHERE vault_id = ${vaultId} AND path = ${p}`.execute(db())
  ).rows[0];
  return r ? { id: Number(r.id), hash: r.content_hash, size: r.size, mtimeMs: new Date(r.mtime).getTime() } : undefined;
}
const index = () => host.services.named.get('index') as IndexService;
const abs = (p: string) => path.join(server.vaultDir, p);
/** Changes on disk, then the write-through our own tools use (the watcher is off in this test). */
async function put(p: string, text: string) {
  mkdirSync(path.dirname(abs(p)), { recursive: true });
  writeFileSync(abs(p), text);
  await index().noteWritten(vaultId, p);
}
async function del(p: string) {
  rmSync(abs(p));
  await index().noteRemoved(vaultId, p);
}
async function move(from: string, to: string) {
  mkdirSync(path.dirname(abs(to)), { recursive: true });
  renameSync(abs(from), abs(to));
  await index().noteMoved(vaultId, from, to);
}
/** An agent's write: the contributor as the pipeline would call it with an origin attached. */
async function agentWrite(p: string, text: string, keyId: string) {
  await put(p, text);
  const feed = host.manager.registry.contributors().find((c) => c.family === 'change-feed')!.contributor;
  const pv = (await prevOf(p))!;
  // re-record as the agent: drop the human event the plain put made, then write with an origin
  await sql`DELETE FROM change_events WHERE seq = (SELECT max(seq) FROM change_events)`.execute(db());
  await sql`DELETE FROM change_feed_state WHERE note_id = ${pv.id}`.execute(db());
  await db()
    .transaction()
    .execute((trx) =>
      feed.write(
        trx,
        {
          id: pv.id,
          vaultId,
          path: p,
          contentHash: pv.hash,
          size: pv.size,
          mtimeMs: pv.mtimeMs,
          origin: { kind: 'api_key', id: keyId, name: 'test-rw' },
        } as never,
        null,
      ),
    );
}
async function changes(args: Record<string, unknown>, c = client): Promise<Output> {
  const r = await c.callTool({ name: 'get_changes', arguments: args });
  if (r.isError) throw new Error(textOf(r));
  return r.structuredContent as Output;
}
const keyId = async () =>
  (await sql<{ id: string }>`SELECT id FROM api_keys WHERE name = 'test-rw'`.execute(db())).rows[0].id;

t.test('index operations become created / modified / moved / deleted events, oldest first', async (t) => {
  const start = await changes({ since: 'ev:0' });
  const base = start.next_since;
  await put('Inbox/a.md', 'one');
  await put('Inbox/a.md', 'one'); // same bytes: a re-derive, no event
  await put('Inbox/a.md', 'two');
  await move('Inbox/a.md', 'Archive/a.md');
  await put('b.md', 'bee');
  await del('b.md');
  const o = await changes({ since: base });
  t.same(
    o.events.map((e) => [e.kind, e.path, e.from, e.reason, e.by]),
    [
      ['created', 'Inbox/a.md', null, null, 'human/sync'],
      ['modified', 'Inbox/a.md', null, null, 'human/sync'],
      ['moved', 'Archive/a.md', 'Inbox/a.md', null, 'human/sync'],
      ['created', 'b.md', null, null, 'human/sync'],
      ['deleted', 'b.md', null, 'removed', 'human/sync'],
    ],
  );
  t.equal(o.next_since, o.events[4].cursor);
  const text = textOf(await client.callTool({ name: 'get_changes', arguments: { since: base } }));
  t.match(text, /moved "Inbox\/a\.md" -> "Archive\/a\.md"/);
  t.match(text, /deleted "b\.md" reason=removed by human\/sync/);
  t.match(text.split('\n').pop()!, /^next_since: ev:\d+$/);
  // folder counts a move out of the folder; kinds filter
  t.same(
    (await changes({ since: base, folder: 'Inbox' })).events.map((e) => e.kind),
    ['created', 'modified', 'moved'],
  );
  t.same(
    (await changes({ since: base, kinds: ['deleted'] })).events.map((e) => e.path),
    ['b.md'],
  );
  // paging: exact, exclusive cursors
  const p1 = await changes({ since: base, limit: 2 });
  t.equal(p1.more, true);
  const p2 = await changes({ since: p1.next_since, limit: 10 });
  t.same(
    [...p1.events, ...p2.events].map((e) => e.seq),
    o.events.map((e) => e.seq),
  );
  // a date starts a feed approximately
  t.ok((await changes({ since: '2000-01-01' })).events.length >= 5);
});

t.test('attribution: by=me / agents / human, and (you) in the text', async (t) => {
  const base = (await changes({ since: 'ev:0', limit: 500 })).next_since;
  await agentWrite('agent.md', 'by agent', await keyId());
  await put('human.md', 'by human');
  t.same(
    (await changes({ since: base, by: 'me' })).events.map((e) => e.path),
    ['agent.md'],
  );
  t.same(
    (await changes({ since: base, by: 'agents' })).events.map((e) => e.path),
    ['agent.md'],
  );
  t.same(
    (await changes({ since: base, by: 'human' })).events.map((e) => e.path),
    ['human.md'],
  );
  const ro = await server.connect({ key: server.readKey });
  t.same((await changes({ since: base, by: 'me' }, ro)).events, [], 'another credential is not "me"');
  t.match(
    textOf(await client.callTool({ name: 'get_changes', arguments: { since: base } })),
    /created "agent\.md" by api_key "test-rw" \(you\)/,
  );
});

t.test('cursor rules: above the last event and malformed values are refused', async (t) => {
  const last = (await changes({ since: 'ev:0', limit: 500 })).last_event;
  t.equal(
    refusalOf(await client.callTool({ name: 'get_changes', arguments: { since: `ev:${last + 1}` } }))!.code,
    'invalid_arguments',
  );
  t.equal(
    refusalOf(await client.callTool({ name: 'get_changes', arguments: { since: 'yesterday' } }))!.code,
    'invalid_arguments',
  );
  const empty = await changes({ since: `ev:${last}` });
  t.same([empty.events.length, empty.next_since, empty.more], [0, `ev:${last}`, false]);
});

t.test('the vault://changes resource shows the latest events', async (t) => {
  const r = await client.readResource({ uri: 'vault://changes' });
  t.match((r.contents[0] as { text: string }).text, /next_since: ev:\d+/);
});

t.test('a cursor survives a restart without loss or repetition', async (t) => {
  const mid = (await changes({ since: 'ev:0', limit: 500 })).next_since;
  await put('before-restart.md', 'x');
  await restart(async () => writeFileSync(abs('while-down.md'), 'typed while the server was down'));
  await put('after-restart.md', 'y');
  const o = await changes({ since: mid });
  t.same(
    o.events.map((e) => `${e.kind} ${e.path}`),
    ['created before-restart.md', 'created while-down.md', 'created after-restart.md'],
    'the catch-up scan itemises what changed while down',
  );
  t.same(
    (await changes({ since: o.events[0].cursor })).events.map((e) => e.path),
    ['while-down.md', 'after-restart.md'],
  );
});

async function restart(whileDown: () => Promise<void> = async () => undefined) {
  await client.close();
  await host.close();
  await whileDown();
  host = await Host.start({
    settings: loadSettings({ file: server.configFile, env: {}, cwd: server.dir }),
    http: true,
    builtinDir: path.join(server.dir, 'no-builtins'),
    log: createLogger('silent'),
  });
  await index().whenReady(vaultId);
  client = new Client({ name: 'restart', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${server.key}` } },
    }),
  );
}

t.test('an index rebuilt from empty records one reset event, not a creation per note', async (t) => {
  const last = (await changes({ since: 'ev:0', limit: 500 })).last_event;
  const notes = Number(
    (await sql<{ n: string }>`SELECT count(*) AS n FROM notes WHERE vault_id = ${vaultId}`.execute(db())).rows[0].n,
  );
  t.ok(notes >= 5, `${notes} notes to rebuild`);
  await sql`DELETE FROM notes WHERE vault_id = ${vaultId}`.execute(db());
  await restart(async () => writeFileSync(abs('during-rebuild.md'), 'new while the index was empty'));
  const o = await changes({ since: `ev:${last}` });
  t.same(
    o.events.map((e) => e.kind),
    ['reset'],
    'one reset stands for the whole rebuild',
  );
  t.match(
    textOf(await client.callTool({ name: 'get_changes', arguments: { since: `ev:${last}`, kinds: ['created'] } })),
    /reset — the index was rebuilt from empty/,
  );
  await put('after-rebuild.md', 'z');
  t.same(
    (await changes({ since: o.next_since })).events.map((e) => `${e.kind} ${e.path}`),
    ['created after-rebuild.md'],
    'once ready, new notes are itemised again',
  );
});

t.test('retention prunes by count and marks history_truncated', async (t) => {
  for (let i = 0; i < 5; i++) await put(`bulk${i}.md`, `b${i}`);
  await db()
    .transaction()
    .execute((trx) =>
      prune(trx, vaultId, { retentionDays: 90, maxEvents: 3, pruneEvery: 1000, pageCap: 500, maxEventsPerPass: 1000 }),
    );
  const o = await changes({ since: 'ev:0', limit: 500 });
  t.equal(o.history_truncated, true);
  t.same(
    o.events.map((e) => e.path),
    ['bulk2.md', 'bulk3.md', 'bulk4.md'],
  );
  t.match(
    textOf(await client.callTool({ name: 'get_changes', arguments: { since: 'ev:0' } })),
    /history_truncated: true/,
  );
});

t.test('a pass with more outside changes than it may itemise ends with one gap event counting the rest', async (t) => {
  const server2 = await startTestServer({
    builtinDir: null,
    config: {
      plugins: [path.join(root, 'plugins/change-feed')],
      changeFeed: { maxEventsPerPass: 2 },
      index: { watch: false, reconcileSeconds: 0 },
    },
    files: { 'seed.md': 'seed' },
  });
  t.teardown(() => server2.close());
  const pipeline = server2.host.index!;
  await pipeline.whenReady(server2.host.vaultHandle.id);
  const c = await server2.connect();
  const list = async (since: string) =>
    (await c.callTool({ name: 'get_changes', arguments: { since, limit: 500 } })).structuredContent as Output;
  const base = (await list('ev:0')).next_since;
  for (let i = 0; i < 5; i++) writeFileSync(path.join(server2.vaultDir, `burst${i}.md`), `b${i}`);
  await pipeline.runPass();
  const events = (await list(base)).events;
  t.equal(events.filter((e) => e.kind === 'created').length, 2, 'two itemised');
  const gap = events.find((e) => e.kind === 'gap');
  t.ok(gap, 'one gap event');
  t.equal(gap?.count, 3, 'it counts the three not itemised');
  t.equal(events.at(-1)?.kind, 'gap', 'the gap closes the pass');
});
