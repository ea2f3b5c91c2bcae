// Attempt budgets kept where every server process sharing this database sees them: one row per
// (bucket, key) — sign-in failures per client address (the panel and OAuth sign-in share the bucket),
// client registrations per address — holding the attempts counted in the current fixed window and when
// that window resets. Counted by one INSERT … ON CONFLICT DO UPDATE on the database clock
// (src/host/auth/attempt-budget.ts). Rows whose window has passed mean nothing and are swept.
import { sql, type Kysely } from 'kysely';

export default {
  async up(db: Kysely<any>): Promise<void> {
    await sql`
      CREATE TABLE auth_attempt_budgets (
        bucket    text        NOT NULL,
        key       text        NOT NULL,
        attempts  integer     NOT NULL,
        resets_at timestamptz NOT NULL,
        PRIMARY KEY (bucket, key)
      );
      CREATE INDEX auth_attempt_budgets_resets ON auth_attempt_budgets (resets_at);
    `.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`DROP TABLE auth_attempt_budgets`.execute(db);
  },
};
