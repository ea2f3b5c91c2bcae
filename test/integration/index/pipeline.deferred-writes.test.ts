// A deferred contributor's second transaction: the write-through answers first, settled() waits for the
// rows, a lost transaction is repaired, rows wait index.deferredDelayMs, and index.deferredWrites: false.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { IndexPipeline } from '../../../src/host/index/index.js';
import type { NoteModel } from '../../../src/markdown/index.js';
import type { IndexContributor } from '../../../src/sdk/types.js';
import { deferredMarks, rig, until } from './pipeline-rig.js';

// Each subtest builds its own pipeline over a copied vault with every contributor: past tap's 120 s when CI
// shares the cores.
t.setTimeout(300_000);

t.test(
  'a deferred contributor: the write-through answers first, settled() waits for its rows, a lost second transaction is repaired',
  async (t) => {
    const r = await rig({ watch: false });
    t.teardown(() => r.close());
    const events: string[] = [];
    let failNext = false;
    const deferred: IndexContributor<NoteModel> = {
      name: 'slow-rows',
      version: 1,
      deferred: true,
      async writeMany(trx, items) {
        await sql`select 1`.execute(trx);
        await new Promise((res) => setTimeout(res, 50)); // a costly write: the caller must not wait for it
        if (failNext) {
          failNext = false;
          throw new Error('deferred write failed on purpose');
        }
        for (const it of items) events.push(`rows ${it.note.path}`);
      },
      async write() {
        throw new Error('writeMany is used');
      },
      async remove() {},
    };
    r.contributors.push({ family: 'fixture', contributor: deferred });
    r.pipeline.start();
    await r.pipeline.whenReady(r.pipeline.vaultId, 30_000);
    const marks = () => deferredMarks(r);
    t.equal(await marks(), 0, 'passes write every contributor in one transaction: no marks');
    events.length = 0;

    await r.fs.create('Deferred/A.md', Buffer.from('# A\n'));
    await r.pipeline.noteWritten(r.pipeline.vaultId, 'Deferred/A.md');
    events.push('answered');
    t.ok(await r.row('Deferred/A.md'), 'the note row is committed when the call returns');
    t.ok(
      r.calls.some((c) => c.kind === 'write' && c.path === 'Deferred/A.md'),
      'and the other contributors rows with it',
    );
    await r.pipeline.settled(r.pipeline.vaultId);
    events.push('settled');
    t.same(
      events,
      ['answered', 'rows Deferred/A.md', 'settled'],
      'the deferred rows come after the answer and before settled()',
    );
    t.equal(await marks(), 0, 'the second transaction cleared the mark');

    // The second transaction fails: the mark stays, the note is queued again and a pass writes the rows.
    failNext = true;
    events.length = 0;
    await r.fs.replace('Deferred/A.md', Buffer.from('# A\n\nagain\n'));
    await r.pipeline.noteWritten(r.pipeline.vaultId, 'Deferred/A.md');
    await r.pipeline.settled(r.pipeline.vaultId);
    t.equal(await marks(), 1, 'a failed second transaction leaves its mark');
    await until(
      'the failed rows re-derived',
      async () => events.includes('rows Deferred/A.md') && (await marks()) === 0,
    );
    t.pass('the next pass wrote the rows and cleared the mark');

    // The process stopped between the two transactions: a mark left in the table is repaired at start.
    await r.pipeline.close();
    const id = Number((await r.row('Deferred/A.md'))!.id);
    await sql`INSERT INTO index_deferred (note_id, vault_id) VALUES (${id}, ${r.pipeline.vaultId})`.execute(
      r.database.db,
    );
    events.length = 0;
    const again = new IndexPipeline({ ...r.pipeline.deps });
    t.teardown(() => again.close());
    again.start();
    await again.whenReady(again.vaultId, 30_000);
    await until(
      'the marked note re-derived at start',
      async () => events.includes('rows Deferred/A.md') && (await marks()) === 0,
    );
    t.pass('a restart re-derived the marked note and cleared its mark');
  },
);

t.test(
  'deferred rows wait index.deferredDelayMs: a note written again meanwhile is derived once, newest first; a removal or a pass writes them before its own',
  async (t) => {
    const r = await rig({ watch: false, deferredDelayMs: 300 });
    t.teardown(() => r.close());
    const writes: Array<{ path: string; hash: string }> = [];
    const removes: string[] = [];
    const order: string[] = [];
    r.contributors.push({
      family: 'fixture',
      contributor: {
        name: 'waiting-rows',
        version: 1,
        deferred: true,
        async writeMany(trx, items) {
          await sql`select 1`.execute(trx);
          for (const it of items) {
            writes.push({ path: it.note.path, hash: it.note.contentHash });
            order.push(`rows ${it.note.path}`);
          }
        },
        async write() {
          throw new Error('writeMany is used');
        },
        async remove(_trx, note) {
          removes.push(note.path);
          order.push(`remove ${note.path}`);
        },
      },
    });
    r.pipeline.start();
    await r.pipeline.whenReady(r.pipeline.vaultId, 30_000);
    const marks = () => deferredMarks(r);
    writes.length = 0;

    // Three edits of one note and one of another inside the delay: one transaction, the newest content.
    await r.fs.create('Wait/A.md', Buffer.from('# A\n'));
    await r.pipeline.noteWritten(r.pipeline.vaultId, 'Wait/A.md');
    await r.fs.create('Wait/B.md', Buffer.from('# B\n'));
    await r.pipeline.noteWritten(r.pipeline.vaultId, 'Wait/B.md');
    for (const text of ['# A\n\none\n', '# A\n\none\ntwo\n']) {
      await r.fs.replace('Wait/A.md', Buffer.from(text));
      await r.pipeline.noteWritten(r.pipeline.vaultId, 'Wait/A.md');
    }
    t.same(writes, [], 'nothing written yet: the rows wait for the delay');
    t.equal(await marks(), 2, 'both notes are marked meanwhile');
    const newest = r.fs.contentHash(Buffer.from('# A\n\none\ntwo\n'));
    await until('the delay to pass', async () => writes.length > 0, 3000);
    t.same(
      [...writes].sort((a, b) => a.path.localeCompare(b.path)),
      [
        { path: 'Wait/A.md', hash: newest },
        { path: 'Wait/B.md', hash: r.fs.contentHash(Buffer.from('# B\n')) },
      ],
      'each note derived once, from its newest content, without anyone calling settled()',
    );
    await until('the marks cleared', async () => (await marks()) === 0);
    t.pass('the transaction cleared the marks');

    // settled() does not wait for the delay.
    writes.length = 0;
    await r.fs.replace('Wait/B.md', Buffer.from('# B\n\nagain\n'));
    await r.pipeline.noteWritten(r.pipeline.vaultId, 'Wait/B.md');
    const started = performance.now();
    await r.pipeline.settled(r.pipeline.vaultId);
    t.same(
      writes.map((w) => w.path),
      ['Wait/B.md'],
      'settled() wrote the waiting rows',
    );
    t.ok(performance.now() - started < 250, 'without waiting out the 300 ms delay');

    // A pass finds a note changed again while its rows wait: its newer rows take their place, and the
    // older ones never land after them.
    writes.length = 0;
    await r.fs.replace('Wait/B.md', Buffer.from('# B\n\nby the tool\n'));
    await r.pipeline.noteWritten(r.pipeline.vaultId, 'Wait/B.md');
    writeFileSync(path.join(r.vault, 'Wait/B.md'), '# B\n\nby an editor\n');
    await r.pipeline.runPass();
    t.same(writes, [], 'the pass queued the rows of a note whose rows wait');
    await r.pipeline.settled(r.pipeline.vaultId);
    t.same(
      writes,
      [{ path: 'Wait/B.md', hash: r.fs.contentHash(Buffer.from('# B\n\nby an editor\n')) }],
      'one write, from what the pass read',
    );
    t.equal(await marks(), 0, 'its mark cleared');

    // A removal of a note whose rows wait: they are written first, then removed; nothing fails on the way.
    order.length = 0;
    await r.fs.replace('Wait/A.md', Buffer.from('# A\n\nthree\n'));
    await r.pipeline.noteWritten(r.pipeline.vaultId, 'Wait/A.md');
    await r.fs.trash('Wait/A.md');
    await r.pipeline.noteRemoved(r.pipeline.vaultId, 'Wait/A.md');
    t.same(order, ['rows Wait/A.md', 'remove Wait/A.md'], 'waiting rows land before the removal');
    t.equal(await marks(), 0, 'no mark left behind');
    await r.pipeline.settled(r.pipeline.vaultId);
    t.equal(r.pipeline.status().failures, 0, 'no index failure');
  },
);

t.test(
  'index.deferredWrites: false writes a deferred contributor in the one transaction, before answering',
  async (t) => {
    const r = await rig({ watch: false, deferredWrites: false });
    t.teardown(() => r.close());
    const events: string[] = [];
    r.contributors.push({
      family: 'fixture',
      contributor: {
        name: 'slow-rows',
        version: 1,
        deferred: true,
        async write(_trx, note) {
          events.push(`rows ${note.path}`);
        },
        async remove() {},
      },
    });
    r.pipeline.start();
    await r.pipeline.whenReady(r.pipeline.vaultId, 30_000);
    events.length = 0;
    await r.fs.create('Deferred/B.md', Buffer.from('# B\n'));
    await r.pipeline.noteWritten(r.pipeline.vaultId, 'Deferred/B.md');
    events.push('answered');
    t.same(events, ['rows Deferred/B.md', 'answered']);
    t.equal(await deferredMarks(r), 0, 'no marks');
  },
);
