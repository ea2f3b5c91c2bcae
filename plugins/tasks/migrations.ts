// The tasks family's tables: one row per checkbox task and one per note the contributor has seen.
// Only SQL PostgreSQL 15 understands; dates are ISO `YYYY-MM-DD` text so a bad date never fails a batch.
import { sql, type Kysely } from 'kysely';
import type { FamilyMigration } from '../../src/sdk/index.js';

export const tasksMigrations: Record<string, FamilyMigration> = {
  '0001-tasks': {
    async up(db: Kysely<any>): Promise<void> {
      await sql`
        CREATE TABLE tasks_items (
          id            bigserial PRIMARY KEY,
          vault_id      integer NOT NULL,
          note_id       bigint NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
          path          text NOT NULL,
          line          integer NOT NULL,
          status        text NOT NULL,
          status_type   text NOT NULL,
          text          text NOT NULL,
          tags          jsonb NOT NULL DEFAULT '[]',
          heading_path  text NOT NULL DEFAULT '',
          due           text,
          scheduled     text,
          start_date    text,
          done_date     text,
          created_date  text,
          cancelled_date text,
          priority      text,
          recurrence    text,
          task_id       text,
          depends_on    jsonb NOT NULL DEFAULT '[]'
        );
        CREATE INDEX tasks_items_order ON tasks_items (vault_id, (due IS NULL), (coalesce(due, '')), path, line);
        CREATE INDEX tasks_items_note ON tasks_items (note_id);
        CREATE TABLE tasks_notes (
          note_id    bigint PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
          vault_id   integer NOT NULL,
          task_count integer NOT NULL,
          error      text
        );
      `.execute(db);
    },
    async down(db: Kysely<any>): Promise<void> {
      await sql`DROP TABLE tasks_items; DROP TABLE tasks_notes;`.execute(db);
    },
  },
};
