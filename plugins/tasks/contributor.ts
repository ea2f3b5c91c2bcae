// The tasks index contributor: replaces a note's rows in tasks_items from the note model's checkbox tasks.
// Runs inside the pipeline's transaction; never reads vault bytes and never commits by itself.
import { sql } from 'kysely';
import type { NoteModel } from '../../src/markdown/index.js';
import type { ContributorItem, DatabaseTransaction, IndexContributor } from '../../src/sdk/index.js';
import { bigintArray, jsonPieces, rowSlices } from '../../src/sdk/index.js';

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const date = (d: string | null): string | null => (d !== null && DATE.test(d) ? d : null);

/** Replace the tasks of a batch of distinct notes: one delete, inserts of ≤ 1,000 rows, one upsert of the counts. */
async function writeMany(trx: DatabaseTransaction, items: ReadonlyArray<ContributorItem<NoteModel>>): Promise<void> {
  if (items.length === 0) return;
  const vaultId = items[0].note.vaultId;
  await sql`DELETE FROM tasks_items WHERE note_id = ANY(${`{${items.map((i) => i.note.id).join(',')}}`}::bigint[])`.execute(
    trx,
  );
  // Rows are built a statement's worth at a time: a note of 50,000 tasks never becomes one batch on the
  // event loop, which turns while each insert runs.
  const tasks = items.flatMap(({ note, model }) => model.tasks.map((task) => ({ note, task })));
  const rows = rowSlices(tasks, ({ note, task: t }) => ({
    note_id: note.id,
    path: note.path,
    line: t.line,
    status: t.status,
    status_type: t.statusType,
    text: t.text,
    tags: t.tags,
    heading_path: t.headingPath,
    due: date(t.due),
    scheduled: date(t.scheduled),
    start_date: date(t.start),
    done_date: date(t.done),
    created_date: date(t.created),
    cancelled_date: date(t.cancelled),
    priority: t.priority,
    recurrence: t.recurrence,
    task_id: t.id,
    depends_on: t.dependsOn,
  }));
  for (const slice of rows) {
    await sql`
      INSERT INTO tasks_items (vault_id, note_id, path, line, status, status_type, text, tags, heading_path, due, scheduled, start_date,
        done_date, created_date, cancelled_date, priority, recurrence, task_id, depends_on)
      SELECT ${vaultId}, r.note_id, r.path, r.line, r.status, r.status_type, r.text, r.tags, r.heading_path, r.due, r.scheduled,
        r.start_date, r.done_date, r.created_date, r.cancelled_date, r.priority, r.recurrence, r.task_id, r.depends_on
      FROM jsonb_to_recordset(${JSON.stringify(slice)}::jsonb) AS r(note_id bigint, path text, line int, status text, status_type text, text text,
        tags jsonb, heading_path text, due text, scheduled text, start_date text, done_date text, created_date text, cancelled_date text,
        priority text, recurrence text, task_id text, depends_on jsonb)`.execute(trx);
  }
  const counts = items.map(({ note, model }) => ({
    note_id: note.id,
    task_count: model.tasks.length,
    error: model.problems.find((p) => p.startsWith('parser_error')) ?? null,
  }));
  await sql`
    INSERT INTO tasks_notes (note_id, vault_id, task_count, error)
    SELECT r.note_id, ${vaultId}, r.task_count, r.error FROM jsonb_to_recordset(${JSON.stringify(counts)}::jsonb) AS r(note_id bigint, task_count int, error text)
    ON CONFLICT (note_id) DO UPDATE SET task_count = EXCLUDED.task_count, error = EXCLUDED.error`.execute(trx);
}

export const tasksContributor: IndexContributor<NoteModel> = {
  name: 'tasks',
  version: 1,
  write: (trx, note, model) => writeMany(trx, [{ note, model }]),
  writeMany,
  fingerprint: (note, model) =>
    jsonPieces([note.path, model.problems.find((p) => p.startsWith('parser_error')) ?? null], model.tasks),
  async rename(trx, note) {
    await sql`UPDATE tasks_items SET path = ${note.path} WHERE note_id = ${note.id}`.execute(trx);
  },
  async remove(trx, note) {
    await sql`DELETE FROM tasks_items WHERE note_id = ${note.id}`.execute(trx);
    await sql`DELETE FROM tasks_notes WHERE note_id = ${note.id}`.execute(trx);
  },
  async removeMany(trx, notes) {
    const ids = bigintArray(notes.map((n) => n.id));
    await sql`DELETE FROM tasks_items WHERE note_id = ANY(${ids})`.execute(trx);
    await sql`DELETE FROM tasks_notes WHERE note_id = ANY(${ids})`.execute(trx);
  },
};
