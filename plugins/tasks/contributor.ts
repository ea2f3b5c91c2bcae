// The tasks index contributor: replaces a note's rows in tasks_items from the note model's checkbox tasks.
// Runs inside the pipeline's transaction; never reads vault bytes and never commits by itself.
import { sql } from 'kysely';
import type { NoteModel } from '../../src/markdown/index.js';
import type { IndexContributor } from '../../src/sdk/types.js';

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const date = (d: string | null): string | null => (d !== null && DATE.test(d) ? d : null);

export const tasksContributor: IndexContributor<NoteModel> = {
  name: 'tasks',
  version: 1,
  async write(trx, note, model) {
    await sql`DELETE FROM tasks_items WHERE note_id = ${note.id}`.execute(trx);
    const failed = model.problems.find((p) => p.startsWith('parser_error'));
    const rows = model.tasks.map((t) => ({
      line: t.line, status: t.status, status_type: t.statusType, text: t.text, tags: t.tags, heading_path: t.headingPath,
      due: date(t.due), scheduled: date(t.scheduled), start_date: date(t.start), done_date: date(t.done), created_date: date(t.created),
      cancelled_date: date(t.cancelled), priority: t.priority, recurrence: t.recurrence, task_id: t.id, depends_on: t.dependsOn,
    }));
    for (let i = 0; i < rows.length; i += 1000) {
      await sql`
        INSERT INTO tasks_items (vault_id, note_id, path, line, status, status_type, text, tags, heading_path, due, scheduled, start_date,
          done_date, created_date, cancelled_date, priority, recurrence, task_id, depends_on)
        SELECT ${note.vaultId}, ${note.id}, ${note.path}, r.line, r.status, r.status_type, r.text, r.tags, r.heading_path, r.due, r.scheduled,
          r.start_date, r.done_date, r.created_date, r.cancelled_date, r.priority, r.recurrence, r.task_id, r.depends_on
        FROM jsonb_to_recordset(${JSON.stringify(rows.slice(i, i + 1000))}::jsonb) AS r(line int, status text, status_type text, text text,
          tags jsonb, heading_path text, due text, scheduled text, start_date text, done_date text, created_date text, cancelled_date text,
          priority text, recurrence text, task_id text, depends_on jsonb)`.execute(trx);
    }
    await sql`
      INSERT INTO tasks_notes (note_id, vault_id, task_count, error) VALUES (${note.id}, ${note.vaultId}, ${rows.length}, ${failed ?? null})
      ON CONFLICT (note_id) DO UPDATE SET task_count = EXCLUDED.task_count, error = EXCLUDED.error`.execute(trx);
  },
  async rename(trx, note) {
    await sql`UPDATE tasks_items SET path = ${note.path} WHERE note_id = ${note.id}`.execute(trx);
  },
  async remove(trx, note) {
    await sql`DELETE FROM tasks_items WHERE note_id = ${note.id}`.execute(trx);
    await sql`DELETE FROM tasks_notes WHERE note_id = ${note.id}`.execute(trx);
  },
};
