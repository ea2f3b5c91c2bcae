// Notes whose files went are removed together (src/host/index/store.ts): each contributor's `removeMany` where it
// has one. What it must leave is what `remove` called for each note in turn leaves, once the pass has ended (the
// graph's sweep re-resolves the names it queued): every built-in family's rows are compared both ways, in rolled-back
// transactions over the same indexed vault, for a folder past the graph's bulk threshold and for a few notes under
// it. Then a folder deleted while the server was down goes through the real pipeline.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import t from 'tap';
import { reresolve } from '../../../plugins/graph/contributor.js';
import { Host } from '../../../src/host/host.js';
import { createLogger } from '../../../src/host/log/logger.js';
import { loadSettings } from '../../../src/host/settings/load.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';
import type { DatabaseTransaction, RemovedNote } from '../../../src/sdk/types.js';

const GONE = 20;

function vault(): Record<string, string> {
  const files: Record<string, string> = {
    'keep/hub.md': '# hub\n\n[[g0]] [[g5]] [[shared]] [[alias-g7]] [[gone/g9]]\n\n- [ ] keep this\n',
    'keep/shared.md': '# shared, kept\n\n[[hub]]\n',
    'keep/g3.md': '# a kept g3: links to g3 are ambiguous until the other goes\n',
  };
  for (let i = 0; i < GONE; i++)
    files[`gone/g${i}.md`] =
      `---\naliases: [alias-g${i}]\ntags: [t${i % 3}]\n---\n# g${i}\n\n[[g${(i + 1) % GONE}]] [[hub]] [[shared]] [[alias-g${(i + 3) % GONE}]] [[g3]]\n\n- [ ] do g${i}\n- [x] did g${i}\n`;
  files['gone/shared.md'] = '# shared, going\n';
  return files;
}

/** Every built-in family's rows that a removal touches, ids and times left out where they are sequence values. */
async function dump(trx: DatabaseTransaction, vaultId: number): Promise<Record<string, unknown[]>> {
  const q = async (text: string) => (await sql.raw(text).execute(trx)).rows;
  return {
    notes: await q('SELECT id, path FROM notes ORDER BY id'),
    keyword: await q('SELECT note_id, body_len, rev FROM search_keyword ORDER BY note_id'),
    keywordStats: await q(`SELECT docs, total_len, rev FROM search_keyword_stats WHERE vault_id = ${vaultId}`),
    tasks: await q('SELECT note_id, line, text, status FROM tasks_items ORDER BY note_id, line'),
    taskNotes: await q('SELECT note_id FROM tasks_notes ORDER BY note_id'),
    events: await q(
      "SELECT kind, path, from_path, reason, actor_kind FROM change_events WHERE kind <> 'gap' ORDER BY seq",
    ),
    feedState: await q('SELECT note_id, path FROM change_feed_state ORDER BY note_id'),
    feedMeta: await q('SELECT vault_id, since_prune FROM change_feed_meta ORDER BY vault_id'),
    links: await q(
      'SELECT source_id, ord, target, target_id, ambiguous, candidates, attachment FROM graph_links ORDER BY source_id, ord',
    ),
    nodes: await q('SELECT note_id, path, name_key FROM graph_nodes ORDER BY note_id'),
    aliases: await q('SELECT note_id, key FROM graph_aliases ORDER BY note_id, key'),
  };
}

const server = await startTestServer({ files: vault(), config: { index: { watch: false, reconcileSeconds: 0 } } });
let host: Host = server.host;
t.teardown(async () => {
  await host.close().catch(() => undefined);
  rmSync(server.dir, { recursive: true, force: true });
});
const indexOf = (h: Host) => h.services.named.get('index') as IndexService;
await indexOf(host).whenReady(host.vaultHandle.id);
const vaultId = host.vaultHandle.id;

/** What each way of removing `paths` leaves, after the pass end's sweep, rolled back. */
async function removedBothWays(paths: readonly string[]) {
  const db = host.database.db;
  const { rows } = await sql<{ id: string; path: string }>`
    SELECT id, path FROM notes WHERE vault_id = ${vaultId} AND path = ANY(${paths}::text[]) ORDER BY path`.execute(db);
  const notes: RemovedNote[] = rows.map((r) => ({ id: Number(r.id), vaultId, path: r.path, reason: 'removed' }));
  const contributors = host.manager.registry.contributors().map((c) => c.contributor);
  const out: Record<string, Record<string, unknown[]>> = {};
  for (const mode of ['each', 'many'] as const) {
    await db
      .transaction()
      .execute(async (trx) => {
        if (mode === 'each') out.before = await dump(trx, vaultId);
        for (const c of contributors) {
          if (mode === 'many' && c.removeMany) await c.removeMany(trx, notes);
          else for (const n of notes) await c.remove(trx, n);
        }
        await sql`DELETE FROM notes WHERE id = ANY(${notes.map((n) => n.id)}::bigint[])`.execute(trx);
        // The graph's pass end: the names it queued are re-resolved and dropped from the queue.
        const queued = await sql<{ name_key: string }>`
          DELETE FROM graph_pending WHERE vault_id = ${vaultId} RETURNING name_key`.execute(trx);
        if (queued.rows.length > 0) await reresolve(trx, vaultId, { nameKeys: queued.rows.map((r) => r.name_key) });
        out[mode] = await dump(trx, vaultId);
        throw new Error('rollback');
      })
      .catch((e: Error) => {
        if (e.message !== 'rollback') throw e;
      });
  }
  return { notes, ...out } as {
    notes: RemovedNote[];
    before: typeof out.each;
    each: typeof out.each;
    many: typeof out.many;
  };
}

t.test('a folder past the bulk threshold: removeMany leaves what remove does note by note', async (t) => {
  const paths = [...Array(GONE).keys()].map((i) => `gone/g${i}.md`).concat('gone/shared.md');
  const r = await removedBothWays(paths);
  t.equal(r.notes.length, GONE + 1);
  t.same(r.many, r.each);
  // The comparison is worth something only if the removal changed every family's rows.
  for (const table of ['notes', 'keyword', 'keywordStats', 'tasks', 'events', 'feedState', 'links', 'nodes', 'aliases'])
    t.notSame(r.each[table], r.before[table], `${table} changed`);
  t.equal(r.each.events.length - r.before.events.length, GONE + 1, 'a deleted event for each note');
});

t.test('a few notes, under the threshold: the same, re-resolved in the transaction', async (t) => {
  const r = await removedBothWays(['gone/g3.md', 'gone/g5.md', 'gone/shared.md']);
  t.same(r.many, r.each);
  t.notSame(r.each.links, r.before.links);
});

t.test('a folder deleted while the server was down goes through removeMany', async (t) => {
  await host.close();
  rmSync(path.join(server.dir, 'vault', 'gone'), { recursive: true });
  host = await Host.start({
    settings: loadSettings({ file: server.configFile, env: {}, cwd: server.dir }),
    log: createLogger('silent'),
  });
  await indexOf(host).whenReady(host.vaultHandle.id);
  const db = host.database.db;
  const one = async (text: string) => (await sql.raw<{ n: number }>(text).execute(db)).rows[0].n;
  t.equal(await one('SELECT count(*)::int AS n FROM notes'), 3);
  t.equal(await one('SELECT count(*)::int AS n FROM search_keyword'), 3);
  t.equal(await one('SELECT docs::int AS n FROM search_keyword_stats'), 3, 'the keyword stats follow');
  t.equal(
    await one(
      'SELECT (s.total_len - (SELECT sum(body_len) FROM search_keyword))::int AS n FROM search_keyword_stats s',
    ),
    0,
  );
  t.equal(await one('SELECT count(*)::int AS n FROM tasks_items'), 1);
  t.equal(await one('SELECT count(*)::int AS n FROM graph_aliases'), 0);
  t.equal(await one('SELECT count(*)::int AS n FROM graph_pending'), 0);
  t.equal(await one("SELECT count(*)::int AS n FROM change_events WHERE kind = 'deleted'"), GONE + 1);
  const hub = (
    await sql<{ target: string; target_path: string | null; ambiguous: boolean }>`
      SELECT l.target, t.path AS target_path, l.ambiguous FROM graph_links l
      JOIN notes s ON s.id = l.source_id LEFT JOIN notes t ON t.id = l.target_id
      WHERE s.path = 'keep/hub.md' ORDER BY l.ord`.execute(db)
  ).rows;
  t.same(
    hub.map((l) => [l.target, l.target_path, l.ambiguous]),
    [
      ['g0', null, false],
      ['g5', null, false],
      ['shared', 'keep/shared.md', false],
      ['alias-g7', null, false],
      ['gone/g9', null, false],
    ],
    "the kept notes' links re-resolved: to what is left, or dangling",
  );
});
