// Operator panel sign-ins (/admin): one row per browser session, keyed by the SHA-256 of the cookie's
// secret, so a stolen database dump cannot be replayed as a cookie. Deleting a user's rows ends their
// sessions at once (disabling a user does). Only SQL that PostgreSQL 15 understands.
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
    `.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`DROP TABLE panel_sessions;`.execute(db);
  },
};
