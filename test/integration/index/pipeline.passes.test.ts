// The index pipeline's passes on a temp copy of a corpus vault, without HTTP: cold index counts, watcher
// edits, renames and deletes, quarantine and its retry, bad inputs, a contributor's version bump, reconcile
// without a watcher, and a requeued note.
import t from 'tap';
import { notesOnDisk } from '../../fixtures/corpus.js';
import { appendFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { recorder, rig, until } from './pipeline-rig.js';

const INVALID_UTF8 = Buffer.from([0x23, 0x20, 0x68, 0x69, 0x0a, 0xff, 0xfe, 0x80, 0x0a]);

// Each subtest builds its own pipeline over a copied vault with every contributor: past tap's 120 s when CI
// shares the cores.
t.setTimeout(300_000);

t.test('cold index, watcher, write-through, quarantine, contributor calls', async (t) => {
  const r = await rig(
    {},
    { 'bad-utf8.md': INVALID_UTF8, 'binary.md': Buffer.from([0x61, 0x00, 0x62, 0x0a]), 'empty.md': '' },
  );
  t.teardown(() => r.close());
  const big = path.join(r.vault, 'big.md');
  writeFileSync(big, Buffer.alloc(10 * 1024 * 1024, 'a'));
  const onDisk = notesOnDisk(r.vault);
  r.pipeline.start();
  t.equal(await r.pipeline.whenReady(r.pipeline.vaultId, 30_000), true, 'initial pass completes');
  const st = r.pipeline.status();
  t.equal(st.scanned, onDisk.length, 'scanned = markdown files on disk');
  t.equal(st.indexed + st.quarantined, onDisk.length, 'every note is indexed or quarantined');
  t.equal(st.quarantined, 3, 'invalid UTF-8, NUL bytes and 10 MB are quarantined');
  t.equal(st.pending, 0);
  t.equal(st.watcher, 'watching');
  const count = await r.database.db
    .selectFrom('notes')
    .select(sql<string>`count(*)`.as('n'))
    .where('vault_id', '=', r.pipeline.vaultId)
    .executeTakeFirstOrThrow();
  t.equal(Number(count.n), onDisk.length - 3, 'notes rows = indexed notes');
  const reasons = await r.database.db
    .selectFrom('quarantine')
    .select(['path', 'reason'])
    .where('vault_id', '=', r.pipeline.vaultId)
    .orderBy('path')
    .execute();
  t.same(
    reasons.map((q) => [q.path, q.reason.split(':')[0]]),
    [
      ['bad-utf8.md', 'not_utf8'],
      ['big.md', 'too_large'],
      ['binary.md', 'binary'],
    ],
  );
  t.ok(await r.row('empty.md'), 'an empty note is indexed');
  t.equal(
    r.calls.filter((c) => c.kind === 'write').length,
    onDisk.length - 3,
    'the contributor wrote every indexed note once',
  );

  await t.test('external edit is reflected via the watcher', async (t) => {
    const target = onDisk.find((p) => p !== 'empty.md' && !p.startsWith('b'))!;
    const before = await r.row(target);
    appendFileSync(path.join(r.vault, target), '\n\nAn added line with #fresh-tag\n');
    const after = await until('edit indexed', async () => {
      const row = await r.row(target);
      return row && row.content_hash !== before!.content_hash && row;
    });
    t.ok(after.tags.includes('fresh-tag'), 'the new tag is in the row');
    t.ok(new Date(after.content_changed_at) > new Date(before!.content_changed_at), 'content_changed_at moved');
    t.equal(after.id, before!.id, 'same note id');
  });

  await t.test('external rename is a rename for contributors; delete is a remove', async (t) => {
    const from = onDisk.find((p) => p.includes('/') && !p.startsWith('b'))!;
    const id = (await r.row(from))!.id;
    renameSync(path.join(r.vault, from), path.join(r.vault, 'renamed-by-test.md'));
    const moved = await until('rename indexed', async () => r.row('renamed-by-test.md'));
    t.equal(moved.id, id, 'the note keeps its id');
    t.notOk(await r.row(from), 'old path is gone');
    t.ok(
      r.calls.some((c) => c.kind === 'rename' && c.from === from && c.path === 'renamed-by-test.md'),
      'contributor.rename called',
    );
    unlinkSync(path.join(r.vault, 'renamed-by-test.md'));
    await until('delete indexed', async () => !(await r.row('renamed-by-test.md')));
    t.ok(
      r.calls.some((c) => c.kind === 'remove' && c.path === 'renamed-by-test.md'),
      'contributor.remove called',
    );
  });

  await t.test('write-through is visible when the call returns', async (t) => {
    await r.fs.create('Through/New note.md', Buffer.from('---\ntitle: Written here\n---\n# H\n[[Link]]\n'));
    await r.pipeline.noteWritten(r.pipeline.vaultId, 'Through/New note.md');
    const row = await r.row('Through/New note.md');
    t.equal(row?.title, 'Written here');
    await r.fs.move('Through/New note.md', 'Through/Moved.md');
    await r.pipeline.noteMoved(r.pipeline.vaultId, 'Through/New note.md', 'Through/Moved.md');
    // With a watcher running, its pass may see the move first (id kept or not, by timing); the
    // watcher-free test below pins the rename itself. Here: the new path is indexed when the call returns.
    t.ok(await r.row('Through/Moved.md'), 'noteMoved: the new path is indexed');
    t.notOk(await r.row('Through/New note.md'), 'and the old one is gone');
    await r.fs.trash('Through/Moved.md');
    await r.pipeline.noteRemoved(r.pipeline.vaultId, 'Through/Moved.md');
    t.notOk(await r.row('Through/Moved.md'));
    await r.pipeline.noteWritten(r.pipeline.vaultId, 'Through/never-existed.md');
    t.notOk(await r.row('Through/never-existed.md'), 'a path that vanished is no error');
  });

  await t.test('quarantined notes are retried when they change', async (t) => {
    writeFileSync(path.join(r.vault, 'bad-utf8.md'), '# fixed\n');
    writeFileSync(big, '# small now\n');
    await until('fixed notes indexed', async () => (await r.row('bad-utf8.md')) && (await r.row('big.md')));
    const left = await r.database.db
      .selectFrom('quarantine')
      .select('path')
      .where('vault_id', '=', r.pipeline.vaultId)
      .execute();
    t.same(
      left.map((q) => q.path),
      ['binary.md'],
    );
    t.equal(r.pipeline.status().quarantined, 1);
  });

  await t.test('a vanished path in a batch never stops the batch', async (t) => {
    const items = await r.pipeline.prepareBatch([
      ['gone-before-read.md', false],
      ['empty.md', true],
    ]);
    t.same(
      items.map((i) => i.kind),
      ['gone', 'content'],
    );
  });

  await t.test('a contributor version bump re-derives only that contributor', async (t) => {
    const before = r.calls.length;
    r.contributors[0] = { family: 'fixture', contributor: recorder(2, r.calls) };
    r.pipeline.contributorsChanged();
    await until(
      'backlog drained',
      async () =>
        r.calls.filter((c) => c.version === 2).length >= r.pipeline.status().indexed &&
        r.pipeline.status().backlog['fixture/recorder'] === 0,
      8000,
    );
    const rederived = r.calls.slice(before).filter((c) => c.version === 2 && c.kind === 'write');
    t.equal(
      new Set(rederived.map((c) => c.path)).size,
      r.pipeline.status().indexed,
      'every indexed note re-derived once',
    );
    const state = await r.database.db
      .selectFrom('index_contributor_state')
      .selectAll()
      .where('vault_id', '=', r.pipeline.vaultId)
      .executeTakeFirstOrThrow();
    t.equal(Number(state.version), 2);
  });
});

t.test('reconcile catches changes made while no watcher runs', async (t) => {
  const r = await rig({ watch: false });
  t.teardown(() => r.close());
  r.pipeline.start();
  await r.pipeline.whenReady(r.pipeline.vaultId, 30_000);
  t.equal(r.pipeline.status().watcher, 'off');
  const [a, b] = notesOnDisk(r.vault);
  const before = await r.row(a);
  appendFileSync(path.join(r.vault, a), '\nchanged offline\n');
  unlinkSync(path.join(r.vault, b));
  writeFileSync(path.join(r.vault, 'offline-new.md'), '# Offline\n');
  await new Promise((res) => setTimeout(res, 200));
  t.equal((await r.row(a))?.content_hash, before?.content_hash, 'nothing changes without a pass');
  await r.pipeline.runPass();
  t.not((await r.row(a))?.content_hash, before?.content_hash, 'edit found');
  t.notOk(await r.row(b), 'deletion found');
  t.ok(await r.row('offline-new.md'), 'new note found');
  t.ok(r.pipeline.status().lastPassAt);
});

t.test(
  'a requeued note is indexed at once, outside the index loop too (a write-through that found it changed)',
  async (t) => {
    const r = await rig({ watch: false });
    t.teardown(() => r.close());
    r.pipeline.start();
    await r.pipeline.whenReady(r.pipeline.vaultId, 30_000);
    const [a] = notesOnDisk(r.vault);
    const before = await r.row(a);
    appendFileSync(path.join(r.vault, a), '\nchanged under a commit\n');
    r.pipeline.requeue(a);
    const after = await until('the requeued note indexed', async () => {
      const row = await r.row(a);
      return row && row.content_hash !== before?.content_hash ? row : undefined;
    });
    t.ok(after, 'indexed without a watcher event or a reconcile pass');
  },
);
