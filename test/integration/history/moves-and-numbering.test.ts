// A note's history follows it through move_note (issue 43): list_revisions and diff_revisions on the new
// path see the versions from before the move, and the old path's diff compares with the note where it is
// now instead of calling every line deleted. Revision numbers count per vault (issue 35), so one user's
// numbers say nothing of another vault's activity, and numbers handed out before the migration still work.
import t from 'tap';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { textOf } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';
import { addRevisions, listRevisions } from '../../../plugins/history/store.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const families = ['notes', 'change-feed', 'history'].map((f) => path.join(root, 'plugins', f));
const server = await startTestServer({ builtinDir: null, config: { plugins: families } });
t.teardown(() => server.close());
const vaultId = server.host.vaultHandle.id;
await (server.host.services.named.get('index') as IndexService).whenReady(vaultId);
const client: Client = await server.connect({});

async function call(name: string, args: Record<string, unknown>): Promise<any> {
  const r = await client.callTool({ name, arguments: args });
  if (r.isError) throw new Error(`${name} refused: ${textOf(r)}`);
  return { ...(r.structuredContent as object), text: textOf(r) };
}

t.test('history follows move_note', async (t) => {
  await call('create_note', { path: 'Quarks', content: 'one\ntwo\n' });
  await call('edit_note', { path: 'Quarks', content: 'three\n', append: true });
  await call('move_note', { from_path: 'Quarks', to_path: 'physics/Quarks' });
  await call('edit_note', { path: 'physics/Quarks', content: 'four\n', append: true });

  const list = await call('list_revisions', { path: 'physics/Quarks' });
  t.same(
    list.revisions.map((r: any) => `${r.kind}:${r.path}`),
    ['write:physics/Quarks.md', 'move:physics/Quarks.md', 'write:Quarks.md', 'create:Quarks.md'],
    'the revisions from before the move are the note’s too',
  );
  const created = list.revisions[3].revision;
  const diff = await call('diff_revisions', { path: 'physics/Quarks', from: created });
  t.match(diff.diff, /\+three/);
  t.match(diff.diff, /\+four/);
  t.notMatch(diff.diff, /-one/, 'lines kept across the move are context, not deleted');
  const read = await call('read_revision', { path: 'physics/Quarks', revision: created });
  t.equal(read.content, 'one\ntwo\n');

  const page = await call('list_revisions', { path: 'physics/Quarks', limit: 2 });
  const rest = await call('list_revisions', { path: 'physics/Quarks', limit: 2, cursor: page.next_cursor });
  t.same(
    rest.revisions.map((r: any) => r.kind),
    ['write', 'create'],
    'pages continue into the old path',
  );

  const old = await call('diff_revisions', { path: 'Quarks', from: created });
  t.equal(old.moved_to, 'physics/Quarks.md', 'the old path says where the note went');
  t.notMatch(old.diff, /-one/, 'and does not call every line deleted');
  t.match(old.diff, /\+four/);
  t.match(old.text, /current at physics\/Quarks\.md, where the note was moved/);
});

t.test('a note moved away and back keeps one history without looping', async (t) => {
  await call('create_note', { path: 'loop', content: 'a\n' });
  await call('move_note', { from_path: 'loop', to_path: 'elsewhere' });
  await call('move_note', { from_path: 'elsewhere', to_path: 'loop' });
  const list = await call('list_revisions', { path: 'loop' });
  t.same(
    list.revisions.map((r: any) => r.kind),
    ['move', 'move', 'create'],
  );
});

t.test('revision numbers count per vault, from each vault’s own highest', async (t) => {
  const db = server.host.database.db;
  const other = vaultId + 1000;
  const before = Number(
    (await sql<{ m: string }>`SELECT max(seq) AS m FROM history_revisions WHERE vault_id = ${vaultId}`.execute(db))
      .rows[0].m,
  );
  const revision = (vault: number, p: string) => ({
    revision: {
      vaultId: vault,
      path: p,
      kind: 'create' as const,
      target: 'note' as const,
      hash: null,
      previousHash: null,
      size: 1,
      at: new Date(),
    },
    blob: null,
  });
  await addRevisions(db, [revision(other, 'x.md'), revision(other, 'y.md')], false);
  await addRevisions(db, [revision(vaultId, 'z.md')], false);
  t.same(
    (await listRevisions(db, other, 'y.md', 5, null)).map((r) => Number(r.id)),
    [2],
    'another vault starts at 1, whatever this one has done',
  );
  t.same(
    (await listRevisions(db, vaultId, 'z.md', 5, null)).map((r) => Number(r.id)),
    [before + 1],
    'and this one is not moved on by the other’s revisions',
  );
  await sql`DELETE FROM history_revisions WHERE vault_id = ${other}`.execute(db);
});
