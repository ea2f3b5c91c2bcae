// Write-through on the index pipeline, without a watcher racing it: a move with an edit, removes with their
// reason and origin, paths our own tools hold from a pass, and concurrent calls sharing one group commit.
import t from 'tap';
import { sql } from 'kysely';
import { rig, until } from './pipeline-rig.js';

// Each subtest builds its own pipeline over a copied vault with every contributor: past tap's 120 s when CI
// shares the cores.
t.setTimeout(300_000);

t.test(
  'write-through without a watcher: a move with an edit is a rename then a write; removes carry reason and origin',
  async (t) => {
    // No watcher here, so nothing races the write-through calls.
    const r = await rig({ watch: false });
    t.teardown(() => r.close());
    r.pipeline.start();
    await r.pipeline.whenReady(r.pipeline.vaultId, 30_000);
    const agent = { kind: 'api_key', id: 'k1', name: 'agent-key' } as const;
    await r.fs.create('Through/A.md', Buffer.from('# A\n'));
    await r.pipeline.noteWritten(r.pipeline.vaultId, 'Through/A.md', agent);
    const idA = (await r.row('Through/A.md'))?.id;
    await r.fs.move('Through/A.md', 'Through/B.md');
    await r.fs.replace('Through/B.md', Buffer.from('# B, edited while moving\n'));
    const writesBefore = r.calls.filter((c) => c.kind === 'write' && c.path === 'Through/B.md').length;
    await r.pipeline.noteMoved(r.pipeline.vaultId, 'Through/A.md', 'Through/B.md', agent);
    t.ok(
      r.calls.some((c) => c.kind === 'rename' && c.from === 'Through/A.md' && c.path === 'Through/B.md'),
      'a rename for the move',
    );
    t.equal((await r.row('Through/B.md'))?.id, idA, 'noteMoved keeps the note id');
    t.equal(
      r.calls.filter((c) => c.kind === 'write' && c.path === 'Through/B.md').length,
      writesBefore + 1,
      'and one write for the edit',
    );
    await r.fs.trash('Through/B.md');
    await r.pipeline.noteRemoved(r.pipeline.vaultId, 'Through/B.md', agent);
    t.ok(
      r.calls.some(
        (c) => c.kind === 'remove' && c.path === 'Through/B.md' && c.reason === 'removed' && c.origin === 'agent-key',
      ),
      'remove carries its reason and origin',
    );
  },
);

t.test(
  'a pass between our own rename and its write-through leaves the held paths: the move keeps its rename and origin',
  async (t) => {
    const r = await rig({ watch: false });
    t.teardown(() => r.close());
    r.pipeline.start();
    await r.pipeline.whenReady(r.pipeline.vaultId, 30_000);
    const v = r.pipeline.vaultId;
    const agent = { kind: 'api_key', id: 'k1', name: 'agent-key' } as const;
    await r.fs.create('Held/A.md', Buffer.from('# A\n'));
    await r.pipeline.noteWritten(v, 'Held/A.md', agent);
    const idA = (await r.row('Held/A.md'))?.id;

    const release = r.pipeline.hold(v, ['Held/A.md', 'Held/B.md']);
    await r.fs.move('Held/A.md', 'Held/B.md');
    // The pass reads the disk after the rename and before the write-through: it sees A gone and B new.
    await r.pipeline.runPass();
    t.ok(await r.row('Held/A.md'), 'the pass left the held source');
    t.notOk(await r.row('Held/B.md'), 'and the held destination');
    await r.pipeline.noteMoved(v, 'Held/A.md', 'Held/B.md', agent);
    release();
    t.equal((await r.row('Held/B.md'))?.id, idA, 'the note keeps its id');
    t.ok(
      r.calls.some((c) => c.kind === 'rename' && c.from === 'Held/A.md' && c.path === 'Held/B.md'),
      'contributors see a rename',
    );
    t.notOk(
      r.calls.some((c) => c.kind === 'remove' && c.path === 'Held/A.md'),
      'never an outside removal of the source',
    );

    // A hold released without its write-through (the rename failed, or the write-through did): what a pass
    // left meanwhile is indexed again.
    const again = r.pipeline.hold(v, ['Held/B.md', 'Held/C.md']);
    await r.fs.move('Held/B.md', 'Held/C.md');
    await r.pipeline.runPass();
    t.ok(await r.row('Held/B.md'), 'held: the pass left it');
    again();
    await until(
      'the left paths indexed once released',
      async () => !(await r.row('Held/B.md')) && (await r.row('Held/C.md')),
    );
    t.pass('released, the next pass indexed the rename it had left');
  },
);

t.test('concurrent write-throughs commit together (group commit), each sees its row when it returns', async (t) => {
  const r = await rig({ watch: false });
  t.teardown(() => r.close());
  const batches: number[] = [];
  r.contributors.push({
    family: 'fixture',
    contributor: {
      name: 'batches',
      version: 1,
      async write() {
        batches.push(1);
      },
      async writeMany(trx, items) {
        await sql`select 1`.execute(trx);
        batches.push(items.length);
      },
      async remove() {},
    },
  });
  r.pipeline.start();
  await r.pipeline.whenReady(r.pipeline.vaultId, 30_000);
  batches.length = 0;
  const agent = { kind: 'api_key', id: 'k1', name: 'agent-key' } as const;
  const other = { kind: 'api_key', id: 'k2', name: 'other-key' } as const;
  const paths = Array.from({ length: 12 }, (_, i) => `Group/N${i}.md`);
  await Promise.all(paths.map((p) => r.fs.create(p, Buffer.from(`# ${p}\n`))));
  await Promise.all(
    paths.map(async (p, i) => {
      await r.pipeline.noteWritten(r.pipeline.vaultId, p, i % 4 === 3 ? other : agent);
      t.ok(await r.row(p), `${p} is indexed when its call returns`);
    }),
  );
  t.equal(
    batches.reduce((a, b) => a + b, 0),
    paths.length,
    'every note reached the contributor once',
  );
  t.ok(Math.max(...batches) > 1, `some write-throughs shared a batch (batch sizes ${batches.join(',')})`);
  t.ok(batches.length >= 2, 'requests of different origins never share a batch');
});
