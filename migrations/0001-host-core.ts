// Host tables: vaults, API keys, usage logs, and the notes table the index pipeline fills.
// Only SQL that PostgreSQL 15 understands (PGlite is 18, CI's server is 15).
import { sql, type Kysely } from 'kysely';

export default {
  async up(db: Kysely<any>): Promise<void> {
    await sql`
      CREATE TABLE vaults (
        id          serial PRIMARY KEY,
        name        text NOT NULL UNIQUE,
        root        text NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE api_keys (
        id           text PRIMARY KEY,
        name         text NOT NULL,
        key_hash     text NOT NULL UNIQUE,
        key_prefix   text NOT NULL,
        scope        text NOT NULL CHECK (scope IN ('read', 'readwrite')),
        vault_id     integer NOT NULL REFERENCES vaults(id) ON DELETE CASCADE,
        is_admin     boolean NOT NULL DEFAULT false,
        created_at   timestamptz NOT NULL DEFAULT now(),
        expires_at   timestamptz,
        revoked_at   timestamptz,
        last_used_at timestamptz
      );
      CREATE TABLE usage_logs (
        id              bigserial PRIMARY KEY,
        at              timestamptz NOT NULL,
        vault_id        integer,
        credential_id   text,
        credential_name text,
        tool            text NOT NULL,
        family          text,
        params          text,
        duration_ms     double precision NOT NULL,
        response_bytes  integer NOT NULL,
        outcome         text NOT NULL,
        refusal_code    text
      );
      CREATE INDEX usage_logs_at ON usage_logs (at);
      CREATE INDEX usage_logs_credential_at ON usage_logs (credential_id, at);
      CREATE TABLE notes (
        id                 bigserial PRIMARY KEY,
        vault_id           integer NOT NULL REFERENCES vaults(id) ON DELETE CASCADE,
        path               text NOT NULL,
        title              text NOT NULL,
        aliases            jsonb NOT NULL DEFAULT '[]',
        tags               jsonb NOT NULL DEFAULT '[]',
        frontmatter        jsonb,
        frontmatter_text   text,
        content_hash       text NOT NULL,
        size               integer NOT NULL,
        mtime              timestamptz NOT NULL,
        content_changed_at timestamptz NOT NULL,
        indexed_at         timestamptz NOT NULL,
        word_count         integer NOT NULL DEFAULT 0,
        problems           jsonb NOT NULL DEFAULT '[]',
        UNIQUE (vault_id, path)
      );
      CREATE INDEX notes_vault_changed ON notes (vault_id, content_changed_at DESC, id DESC);
      CREATE INDEX notes_vault_hash ON notes (vault_id, content_hash);
      CREATE INDEX notes_tags ON notes USING gin (tags jsonb_path_ops);
      CREATE TABLE quarantine (
        vault_id     integer NOT NULL REFERENCES vaults(id) ON DELETE CASCADE,
        path         text NOT NULL,
        reason       text NOT NULL,
        content_hash text,
        since        timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (vault_id, path)
      );
    `.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`DROP TABLE quarantine; DROP TABLE notes; DROP TABLE usage_logs; DROP TABLE api_keys; DROP TABLE vaults;`.execute(
      db,
    );
  },
};
