// OAuth state: the authorization server's records (clients, grants, codes, tokens, sessions,
// interactions) in one keyed table, its signing and cookie keys (made once, never per start), local
// passwords and one-time sign-in links. Only SQL that PostgreSQL 15 understands.
import { sql, type Kysely } from 'kysely';

export default {
  async up(db: Kysely<any>): Promise<void> {
    await sql`
      CREATE TABLE oauth_records (
        model       text NOT NULL,
        id          text NOT NULL,
        payload     jsonb NOT NULL,
        grant_id    text,
        uid         text,
        user_code   text,
        expires_at  timestamptz,
        consumed_at timestamptz,
        created_at  timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (model, id)
      );
      CREATE INDEX oauth_records_grant ON oauth_records (grant_id) WHERE grant_id IS NOT NULL;
      CREATE INDEX oauth_records_uid ON oauth_records (uid) WHERE uid IS NOT NULL;
      CREATE INDEX oauth_records_expiry ON oauth_records (expires_at) WHERE expires_at IS NOT NULL;
      CREATE TABLE oauth_secrets (
        name       text PRIMARY KEY,
        value      jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      ALTER TABLE users ADD COLUMN password_hash text;
      CREATE TABLE sign_in_links (
        token_hash text PRIMARY KEY,
        user_id    integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        expires_at timestamptz NOT NULL,
        used_at    timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      );
    `.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`
      DROP TABLE sign_in_links;
      ALTER TABLE users DROP COLUMN password_hash;
      DROP TABLE oauth_secrets;
      DROP TABLE oauth_records;
    `.execute(db);
  },
};
