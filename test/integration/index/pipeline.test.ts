// The index pipeline on a temp copy of a corpus vault, without HTTP: cold index counts, watcher edits,
// renames and deletes, reconcile without a watcher, write-through, quarantine and its retry, bad inputs,
// and a contributor's write/remove/rename calls and version bump.
import t from 'tap';
import { corpus as corpusPath, notesOnDisk } from '../../fixtures/corpus.js';
import { cpSync, mkdirSync, mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync, appendFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { openDatabase, type DatabaseService } from '../../../src/host/db/index.js';
import { IndexPipeline, type ContributorEntry, type IndexSettings } from '../../../src/host/index/index.js';
import { pgliteTemplate } from '../../../src/host/testing/harness.js';
import { openVault } from '../../../src/host/vault/index.js';
import { PiscinaPool } from '../../../src/host/workers/pool.js';
import type { NoteModel } from '../../../src/markdown/index.js';
import type { IndexContributor, Logger } from '../../../src/sdk/types.js';
import type { VaultFs } from '../../../src/sdk/vault.js';

const CORPUS = corpusPath('obsidian-tasks-demo');
const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const SETTINGS: IndexSettings = {
  watch: true,
  debounceMs: 30,
  reconcileSeconds: 0,
  maxNoteBytes: 5 * 1024 * 1024,
  batchSize: 50,
  parseTaskSize: 25,
  prefetchBatches: 2,
  readConcurrency: 16,
  inlineParseMaxBytes: 64 * 1024,
  groupCommitWaitMs: 10,
  deferredWrites: true,
  deferredDelayMs: 200,
};

interface Call {
  kind: 'write' | 'remove' | 'rename';
  path: string;
  from?: string;
  reason?: string;
  origin?: string;
  id: number;
  version: number;
}

function recorder(version: number, calls: Call[]): IndexContributor<NoteModel> {
  return {
    name: 'recorder',
    version,
    async write(trx, note, model) {
      await sql`select 1`.execute(trx);
      if (model.path !== note.path) throw new Error('model path differs from note path');
      calls.push({ kind: 'write', path: note.path, id: note.id, version });
    },
    async remove(_trx, note) {
      calls.push({
        kind: 'remove',
        path: note.path,
        id: note.id,
        version,
        reason: note.reason,
        origin: note.origin?.name,
      });
    },
    async rename(_trx, note, from) {
      calls.push({ kind: 'rename', path: note.path, from, id: note.id, version });
    },
  };
}

type NoteRow = { id: string; content_hash: string; title: string; content_changed_at: Date; tags: string[] };

interface Rig {
  dir: string;
  vault: string;
  fs: VaultFs;
  database: DatabaseService;
  workers: PiscinaPool;
  pipeline: IndexPipeline;
  calls: Call[];
  contributors: ContributorEntry[];
  row(p: string): Promise<NoteRow | undefined>;
  close(): Promise<void>;
}

// One database and one worker pool for the file, as one host has for all its vaults: each rig is a vault
// of its own (its own row, notes, marks and contributor state), so a rig costs a vault copy and a cold
// index, not a PGlite start and two worker threads.
const shared = (async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-index-db-'));
  cpSync(await pgliteTemplate(), path.join(dir, 'db'), { recursive: true });
  const database = await openDatabase(`pglite:${path.join(dir, 'db')}`, { baseDir: '/' });
  const workers = new PiscinaPool({ threads: 2, idleTimeoutMs: 60_000 });
  t.teardown(async () => {
    await workers.close();
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { database, workers };
})();
let rigs = 0;

async function rig(
  settings: Partial<IndexSettings> = {},
  files: Record<string, string | Uint8Array> = {},
): Promise<Rig> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-index-'));
  const vault = path.join(dir, 'vault');
  cpSync(CORPUS, vault, { recursive: true });
  for (const [p, c] of Object.entries(files)) writeFileSync(path.join(vault, p), c);
  const { database, workers } = await shared;
  const vaultId = Number(
    (
      await sql<{
        id: number;
      }>`INSERT INTO vaults (name, root) VALUES (${`t${++rigs}`}, ${vault}) RETURNING id`.execute(database.db)
    ).rows[0].id,
  );
  const fs = await openVault(vault, { allowNamedStaging: true });
  const calls: Call[] = [];
  const contributors: ContributorEntry[] = [{ family: 'fixture', contributor: recorder(1, calls) }];
  const pipeline = new IndexPipeline({
    db: database.db,
    vault: { id: vaultId, name: 't', obsidianName: null, fs },
    workers,
    log: silent,
    settings: { ...SETTINGS, ...settings },
    contributors: () => contributors.map((e) => ({ ...e })),
  });
  return {
    dir,
    vault,
    fs,
    database,
    workers,
    pipeline,
    calls,
    contributors,
    async row(p) {
      return (await database.db
        .selectFrom('notes')
        .selectAll()
        .where('vault_id', '=', vaultId)
        .where('path', '=', p)
        .executeTakeFirst()) as NoteRow | undefined;
    },
    async close() {
      await pipeline.close();
      await fs.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 4000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

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
    const marks = async () =>
      Number(
        (
          await sql<{
            n: number;
          }>`SELECT count(*)::int AS n FROM index_deferred WHERE vault_id = ${r.pipeline.vaultId}`.execute(
            r.database.db,
          )
        ).rows[0].n,
      );
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
    const marks = async () =>
      Number(
        (
          await sql<{
            n: number;
          }>`SELECT count(*)::int AS n FROM index_deferred WHERE vault_id = ${r.pipeline.vaultId}`.execute(
            r.database.db,
          )
        ).rows[0].n,
      );
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
    t.equal(
      Number(
        (
          await sql<{
            n: number;
          }>`SELECT count(*)::int AS n FROM index_deferred WHERE vault_id = ${r.pipeline.vaultId}`.execute(
            r.database.db,
          )
        ).rows[0].n,
      ),
      0,
      'no marks',
    );
  },
);

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
