// Contributor hooks the index pipeline honours: a fingerprint skips writes that would derive the same rows,
// and prepare runs on each parsed note of a pass before its write.
import t from 'tap';
import { notesOnDisk } from '../../fixtures/corpus.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { rig } from './pipeline-rig.js';

// Each subtest builds its own pipeline over a copied vault with every contributor: past tap's 120 s when CI
// shares the cores.
t.setTimeout(300_000);

t.test('a contributor fingerprint skips writes that would derive the same rows', async (t) => {
  const r = await rig({ watch: false });
  t.teardown(() => r.close());
  const seen: string[] = [];
  r.contributors.push({
    family: 'fixture',
    contributor: {
      name: 'links-only',
      version: 1,
      fingerprint: (note, model) => JSON.stringify([note.path, model.links.map((l) => l.target)]),
      async write(_trx, note) {
        seen.push(note.path);
      },
      async remove() {},
    },
  });
  r.pipeline.start();
  await r.pipeline.whenReady(r.pipeline.vaultId, 30_000);
  const p = 'Memo/Note.md';
  await r.fs.create(p, Buffer.from('# Note\n\nSee [[Other]].\n'));
  await r.pipeline.noteWritten(r.pipeline.vaultId, p);
  t.equal(seen.filter((x) => x === p).length, 1, 'a new note is written');
  await r.fs.replace(p, Buffer.from('# Note\n\nSee [[Other]].\n\nA sentence without links.\n'));
  await r.pipeline.noteWritten(r.pipeline.vaultId, p);
  t.equal(seen.filter((x) => x === p).length, 1, 'an edit that leaves the links alone is skipped');
  t.equal(
    r.calls.filter((c) => c.kind === 'write' && c.path === p).length,
    2,
    'a contributor without a fingerprint still sees every edit',
  );
  await r.fs.replace(p, Buffer.from('# Note\n\nSee [[Other]] and [[Third]].\n'));
  await r.pipeline.noteWritten(r.pipeline.vaultId, p);
  t.equal(seen.filter((x) => x === p).length, 2, 'a new link is written');
  await r.fs.trash(p);
  await r.pipeline.noteRemoved(r.pipeline.vaultId, p);
  await r.fs.create(p, Buffer.from('# Note\n\nSee [[Other]] and [[Third]].\n'));
  await r.pipeline.noteWritten(r.pipeline.vaultId, p);
  t.equal(seen.filter((x) => x === p).length, 3, 'after a remove the same content is written again');
});

t.test(
  'a contributor prepares each parsed note of a pass before its write; a prepare that throws costs only itself',
  async (t) => {
    const failing = 'Broken/Prepare.md';
    const r = await rig({ watch: false }, {});
    t.teardown(() => r.close());
    mkdirSync(path.join(r.vault, 'Broken'), { recursive: true });
    writeFileSync(path.join(r.vault, failing), '# Prepare\n\nThis note makes prepare throw.\n');
    const prepared = new WeakSet<object>();
    const writes: Array<{ path: string; prepared: boolean }> = [];
    r.contributors.push({
      family: 'fixture',
      contributor: {
        name: 'preparing',
        version: 1,
        prepare(model) {
          if (model.path === failing) throw new Error('prepare failed on purpose');
          prepared.add(model);
        },
        async write(_trx, note, model) {
          writes.push({ path: note.path, prepared: prepared.has(model) });
        },
        async remove() {},
      },
    });
    r.pipeline.start();
    await r.pipeline.whenReady(r.pipeline.vaultId, 30_000);
    const onDisk = notesOnDisk(r.vault);
    t.equal(writes.length, onDisk.length, 'every note of the cold pass is written');
    t.same(
      writes.filter((w) => !w.prepared).map((w) => w.path),
      [failing],
      'every note but the one whose prepare threw was prepared before its write',
    );
    t.ok(await r.row(failing), 'the note whose prepare threw is indexed all the same');
    const p = 'Through/Prepared.md';
    await r.fs.create(p, Buffer.from('# Through\n\nWritten through.\n'));
    await r.pipeline.noteWritten(r.pipeline.vaultId, p);
    t.same(
      writes.filter((w) => w.path === p),
      [{ path: p, prepared: false }],
      'a write-through reaches write without a prepare (write derives on its own)',
    );
  },
);
