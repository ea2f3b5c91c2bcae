// Operator panel sign-ins (/admin): one row per browser session, keyed by the SHA-256 of the cookie's
// secret, so a stolen database dump cannot be replayed as a cookie. Deleting a user's rows ends their
// sessions at once (disabling a user does). usage_logs gains result_count (a result's `count`, or its
// `results` length) so the panel can list searches that found nothing. Only SQL PostgreSQL 15 understands.
import { sql, type Kysely } from 'kysely';

export default {
  async up(db: Kysely<any>): Promise<void> {
    await sql`
      CREATE TABLE panel_sessions (
        token_hash   text PRIMARY KEY,
        user_id      integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        created_at   timestamptz NOT NULL DEFAULT now(),
        expires_at   timestamptz NOT NULL,
        last_seen_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX panel_sessions_user ON panel_sessions (user_id);
      CREATE INDEX panel_sessions_expiry ON panel_sessions (expires_at);
      ALTER TABLE usage_logs ADD COLUMN result_count integer;
      CREATE INDEX usage_logs_zero_results ON usage_logs (at) WHERE result_count = 0;
    `.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`DROP TABLE panel_sessions; ALTER TABLE usage_logs DROP COLUMN result_count;`.execute(db);
  },
};
