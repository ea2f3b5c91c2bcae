// list_tasks end to end on a copy of the obsidian-tasks-demo corpus: statuses, dates, priorities and
// tags spot-checked against the files, an independent count of checkbox lines, filters, keyset paging.
// Uses the host's index when it serves one, else applies the index store directly.
import t from 'tap';
import { corpus as corpusPath, notesOnDisk } from '../../fixtures/corpus.js';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { fileURLToPath } from 'node:url';
import { refusalOf as refusalOfResult, textOf as textOfResult } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';
import { applyOps, type Op } from '../../../src/host/index/store.js';
import { parseNote } from '../../../src/markdown/index.js';

// The SDK's callTool result type is wider than the test kit's parameter; these narrow it once.
const textOf = (r: unknown): string => textOfResult(r as { content?: unknown });
const refusalOf = (r: unknown) => refusalOfResult(r as { isError?: boolean; content?: unknown });

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const corpus = corpusPath('obsidian-tasks-demo');
// update_task writes through the notes family's note-writer, so the notes family is loaded beside tasks.
const server = await startTestServer({
  builtinDir: null,
  copyVaultFrom: corpus,
  config: {
    plugins: [path.join(root, 'plugins/notes'), path.join(root, 'plugins/tasks')],
    tasks: { statuses: { '!': 'todo' } },
    index: { watch: false, reconcileSeconds: 0 },
  },
});
t.teardown(() => server.close());
const client = await server.connect();
const db = server.host.database.db;
const vaultId = server.host.vaultHandle.id;
const index = server.host.services.named.get('index') as IndexService | undefined;

const files = notesOnDisk(corpus);
if (index) await index.whenReady(vaultId, 30_000);
else {
  // Half the vault first, to see the "not yet scanned" header, then the rest.
  const contributors = server.host.manager.registry.contributors() as never;
  const ops = (list: string[]): Op[] =>
    list.map((p) => {
      const bytes = readFileSync(path.join(server.vaultDir, p));
      return {
        op: 'upsert',
        path: p,
        hash: `sha256:${createHash('sha256').update(bytes).digest('hex')}`,
        size: bytes.length,
        mtimeMs: Date.now(),
        model: parseNote(bytes, { path: p }),
      };
    });
  await db.transaction().execute((trx) => applyOps(trx, vaultId, ops(files.slice(0, 100)), contributors, new Date()));
  // notes rows for the rest exist without task rows: exactly what "not yet scanned" means
  await sql`INSERT INTO notes (vault_id, path, title, content_hash, size, mtime, content_changed_at, indexed_at)
    SELECT ${vaultId}, p, p, 'sha256:x', 0, now(), now(), now() FROM jsonb_array_elements_text(${JSON.stringify(files.slice(100))}::jsonb) AS p`.execute(
    db,
  );
  const r = (await client.callTool({ name: 'list_tasks', arguments: {} })).structuredContent as { not_scanned: number };
  t.equal(r.not_scanned, files.length - 100, 'the header counts notes not yet scanned');
  await sql`DELETE FROM notes WHERE vault_id = ${vaultId} AND content_hash = 'sha256:x'`.execute(db);
  await db.transaction().execute((trx) => applyOps(trx, vaultId, ops(files.slice(100)), contributors, new Date()));
}

type Row = {
  path: string;
  line: number;
  status: string;
  status_type: string;
  text: string;
  due: string | null;
  scheduled: string | null;
  start: string | null;
  priority: string | null;
  recurrence: string | null;
  tags: string[];
};
async function all(args: Record<string, unknown>): Promise<{ rows: Row[]; total: number; pages: number }> {
  const rows: Row[] = [];
  let cursor: string | undefined;
  let pages = 0;
  let total = 0;
  do {
    const r = await client.callTool({
      name: 'list_tasks',
      arguments: { ...args, limit: 100, ...(cursor ? { cursor } : {}) },
    });
    if (r.isError) throw new Error(textOf(r));
    const o = r.structuredContent as { tasks: Row[]; next_cursor: string | null; total: number };
    rows.push(...o.tasks);
    total = o.total;
    cursor = o.next_cursor ?? undefined;
    pages++;
  } while (cursor);
  return { rows, total, pages };
}

t.test('every checkbox line outside code is listed once, across pages, ordered by due date', async (t) => {
  const { rows, total, pages } = await all({ status: 'any' });
  t.equal(rows.length, total);
  t.ok(pages > 1, 'several pages');
  t.equal(new Set(rows.map((r) => `${r.path}:${r.line}`)).size, rows.length, 'no repeats across pages');
  let expected = 0;
  for (const p of files) {
    let fence = false;
    for (const line of readFileSync(path.join(corpus, p), 'utf8').split('\n')) {
      if (/^\s*(```|~~~)/.test(line)) fence = !fence;
      else if (!fence && /^\s*(?:>\s*)*[-*+] \[.\] /.test(line)) expected++;
    }
  }
  t.ok(
    Math.abs(rows.length - expected) <= expected * 0.05,
    `listed ${rows.length} tasks; the files hold about ${expected} checkbox lines`,
  );
  const dues = rows.map((r) => r.due);
  const firstUndated = dues.indexOf(null);
  t.ok(firstUndated > 0, 'dated tasks come first');
  t.ok(
    dues.slice(firstUndated).every((d) => d === null),
    'undated last',
  );
  const dated = dues.slice(0, firstUndated) as string[];
  t.same(dated, [...dated].sort(), 'ascending due dates');
});

t.test('fields match the files (spot checks)', async (t) => {
  const { rows } = await all({ status: 'any', folder: 'Formats' });
  const tp = rows.find((r) => r.path === 'Formats/All Formats Parsing.md' && r.line === 5)!;
  t.match(tp, {
    status: '/',
    status_type: 'in_progress',
    priority: 'high',
    recurrence: 'every day',
    start: '2023-04-05',
    scheduled: '2023-04-06',
    due: '2023-04-07',
  });
  t.same(tp.tags, ['task']);
  t.match(tp.text, /This was Tasks format/);
  const highest = rows.find((r) => r.path === 'Formats/Tasks Format.md' && r.line === 25)!;
  t.equal(highest.priority, 'highest');
  const due = rows.find((r) => r.path === 'Formats/Tasks Format.md' && r.line === 10)!;
  t.equal(due.due, '2023-04-16');
});

t.test('status, date, tag and priority filters', async (t) => {
  const open = await all({});
  t.ok(open.rows.every((r) => r.status_type === 'todo' || r.status_type === 'in_progress'));
  t.ok(
    open.rows.some((r) => r.status === '!'),
    'the tasks.statuses setting makes "!" an open task',
  );
  const done = await all({ status: 'done' });
  t.ok(done.rows.length > 0 && done.rows.every((r) => r.status.toLowerCase() === 'x'));
  const byDue = await all({ status: 'any', due_by: '2023-01-01' });
  t.ok(byDue.rows.length > 0 && byDue.rows.every((r) => r.due !== null && r.due <= '2023-01-01'));
  const high = await all({ status: 'any', priority: ['high', 'highest'] });
  t.ok(high.rows.length > 0 && high.rows.every((r) => r.priority === 'high' || r.priority === 'highest'));
  const tagged = await all({ status: 'any', tags: ['#Task'] });
  t.ok(tagged.rows.length > 0 && tagged.rows.every((r) => r.tags.includes('task')));
  const r = await client.callTool({ name: 'list_tasks', arguments: { status: 'done', limit: 3 } });
  t.match(
    textOf(r),
    /^\d+ tasks match \(showing 3\) — 0 notes not yet scanned for tasks, 0 notes whose tasks could not be indexed:/,
  );
  t.match(textOf(r), /more: cursor=/);
  t.equal(
    refusalOf(await client.callTool({ name: 'list_tasks', arguments: { cursor: 'garbage' } }))!.code,
    'invalid_arguments',
  );
  t.equal(
    refusalOf(await client.callTool({ name: 'list_tasks', arguments: { due_by: 'tomorrow' } }))!.code,
    'invalid_arguments',
  );
});

t.test('update_task completes and reopens a task in place, with the ✅ date, bound to the bytes read', async (t) => {
  const file = path.join(server.vaultDir, 'Formats/Tasks Format.md');
  const before = readFileSync(file, 'utf8');
  const today = new Date().toISOString().slice(0, 10);
  const r = await client.callTool({
    name: 'update_task',
    arguments: { path: 'Formats/Tasks Format.md', line: 10, done: true },
  });
  t.notOk(r.isError, r.isError ? textOf(r) : '');
  const o = r.structuredContent as { status: string; previous_status: string; content_hash: string; text: string };
  t.same([o.previous_status, o.status], [' ', 'x']);
  const after = readFileSync(file, 'utf8').split('\n');
  t.equal(after[9], `- [x] #task Has a due date 📅 2023-04-16 ✅ ${today}`);
  t.same(
    after.filter((_, i) => i !== 9),
    before.split('\n').filter((_, i) => i !== 9),
    'no other line changed',
  );
  const listed = (await all({ status: 'done', folder: 'Formats' })).rows.find(
    (x) => x.path === 'Formats/Tasks Format.md' && x.line === 10,
  );
  t.ok(listed, 'list_tasks sees the completed task at once (write-through)');
  const stale = refusalOf(
    await client.callTool({
      name: 'update_task',
      arguments: { path: 'Formats/Tasks Format.md', line: 10, done: false, expected_hash: `sha256:${'0'.repeat(64)}` },
    }),
  )!;
  t.equal(stale.code, 'stale_precondition');
  t.equal(stale.currentHash, o.content_hash);
  const back = await client.callTool({
    name: 'update_task',
    arguments: { path: 'Formats/Tasks Format.md', line: 10, expected_hash: o.content_hash },
  });
  t.notOk(back.isError, back.isError ? textOf(back) : '');
  t.equal(readFileSync(file, 'utf8'), before, 'toggling back restores the original bytes');
  t.equal(
    refusalOf(await client.callTool({ name: 'update_task', arguments: { path: 'Formats/Tasks Format.md', line: 1 } }))!
      .code,
    'invalid_arguments',
  );
  const ro = await server.connect({ key: server.readKey });
  t.notOk(
    (await ro.listTools()).tools.some((x) => x.name === 'update_task'),
    'hidden from read-only keys',
  );
});

t.test('completing a recurring task writes its next occurrence the way the Tasks plugin does', async (t) => {
  const call = async (args: Record<string, unknown>) => {
    const r = await client.callTool({ name: 'update_task', arguments: args });
    t.notOk(r.isError, r.isError ? textOf(r) : '');
    return r;
  };
  const monthly = 'Manual Testing/Recurrence handling invalid dates.md';
  const file = path.join(server.vaultDir, monthly);
  const before = readFileSync(file, 'utf8').split('\n');
  const today = new Date().toISOString().slice(0, 10);
  const r = await call({ path: monthly, line: 23, done: true });
  const o = r.structuredContent as { line: number; next_occurrence: { line: number; due: string } };
  t.match(o, {
    line: 24,
    recurrence: 'every month on the 31st',
    next_occurrence: { line: 23, due: '2022-08-31' },
    completed_removed: false,
  });
  const after = readFileSync(file, 'utf8').split('\n');
  t.equal(after[22], '- [ ] #task do stuff 🔁 every month on the 31st 📅 2022-08-31', 'next occurrence above');
  t.equal(after[23], `- [x] #task do stuff 🔁 every month on the 31st 📅 2022-07-31 ✅ ${today}`);
  t.same(
    [...after.slice(0, 22), ...after.slice(24)],
    [...before.slice(0, 22), ...before.slice(23)],
    'nothing else changed',
  );
  t.match(
    textOf(r),
    /Next occurrence written at line 23: - \[ \] #task do stuff 🔁 every month on the 31st 📅 2022-08-31/,
  );
  const open = (await all({ folder: 'Manual Testing' })).rows.filter(
    (x) => x.path === monthly && x.due === '2022-08-31',
  );
  t.equal(open.length, 1, 'list_tasks lists the new occurrence at once');

  const formats = path.join(server.vaultDir, 'Formats/Tasks Format.md');
  const f0 = readFileSync(formats, 'utf8').split('\n');
  const whenDone = await call({ path: 'Formats/Tasks Format.md', line: 31, done: true });
  t.match(whenDone.structuredContent, {
    line: 32,
    next_occurrence: { line: 31, due: null, text: '- [ ] #task Is a recurring task 🔁 every day when done' },
  });
  const del = await call({ path: 'Formats/Tasks Format.md', line: 41, done: true });
  t.match(del.structuredContent, { line: 41, completed_removed: true, next_occurrence: { line: 41 } });
  const f1 = readFileSync(formats, 'utf8').split('\n');
  t.equal(
    f1.length,
    f0.length + 1,
    'one line added (the when-done occurrence); the 🏁 delete task was replaced by its next occurrence',
  );
  t.equal(f1[40], f0[39], '🏁 delete: the completed line is gone, its next occurrence is left open in its place');
  t.equal(
    refusalOf(
      await client.callTool({
        name: 'update_task',
        arguments: { path: 'Formats/Tasks Format.md', line: 42, status: '[' },
      }),
    )!.code,
    'invalid_arguments',
  );

  await server.host.vaultHandle.fs.create('Odd.md', Buffer.from('- [ ] Howl 🔁 every blue moon 📅 2024-01-01\n'));
  const odd = await call({ path: 'Odd.md', line: 1, done: true });
  t.match(odd.structuredContent, {
    line: 1,
    next_occurrence: null,
    recurrence: 'every blue moon',
    recurrence_problem: /not a rule this server understands/,
  });
  t.equal(readFileSync(path.join(server.vaultDir, 'Odd.md'), 'utf8').split('\n').length, 2, 'only the status changed');
});
