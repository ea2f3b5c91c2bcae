// The history family's tables: content-addressed versions (one row per distinct content per vault) and
// the revisions that name them, with who, when and which tool. Only SQL PostgreSQL 15 understands.
import { sql, type Kysely } from 'kysely';
import type { FamilyMigration } from '../../src/sdk/index.js';

export const historyMigrations: Record<string, FamilyMigration> = {
  '0001-history': {
    async up(db: Kysely<any>): Promise<void> {
      await sql`
        CREATE TABLE history_blobs (
          vault_id  integer NOT NULL,
          hash      text NOT NULL,
          size      integer NOT NULL,
          content   bytea NOT NULL,
          PRIMARY KEY (vault_id, hash)
        );
        CREATE TABLE history_revisions (
          id            bigserial PRIMARY KEY,
          vault_id      integer NOT NULL,
          path          text NOT NULL,
          at            timestamptz NOT NULL DEFAULT now(),
          kind          text NOT NULL CHECK (kind IN ('outside', 'create', 'write', 'move', 'delete')),
          target        text NOT NULL DEFAULT 'note' CHECK (target IN ('note', 'file')),
          hash          text,
          previous_hash text,
          from_path     text,
          size          integer,
          skipped       text,
          actor_kind    text NOT NULL DEFAULT 'human',
          actor_id      text,
          actor_name    text,
          user_name     text,
          client_name   text,
          tool          text,
          event_id      bigint
        );
        CREATE INDEX history_revisions_path ON history_revisions (vault_id, path, id);
        CREATE INDEX history_revisions_at ON history_revisions (vault_id, at);
        CREATE INDEX history_revisions_hash ON history_revisions (vault_id, hash);
        CREATE INDEX history_revisions_previous ON history_revisions (vault_id, previous_hash);
      `.execute(db);
    },
    async down(db: Kysely<any>): Promise<void> {
      await sql`DROP TABLE history_revisions; DROP TABLE history_blobs;`.execute(db);
    },
  },
  '0002-history-vault-sequence': {
    // Revision numbers per vault (issue 35: one global sequence let a user count everyone's writes) and
    // the OAuth client id beside its name (issue 43). Existing rows keep their number (seq = id), so
    // revision ids and cursors handed out before stay valid; each vault counts on from its own highest.
    // The number is taken by a row trigger from a per-vault counter whose row lock orders concurrent
    // writers of one vault, so every insert path (group commit, kept incumbents) numbers alike.
    async up(db: Kysely<any>): Promise<void> {
      await sql`
        ALTER TABLE history_revisions ADD COLUMN seq bigint;
        ALTER TABLE history_revisions ADD COLUMN client_id text;
        UPDATE history_revisions SET seq = id;
        ALTER TABLE history_revisions ALTER COLUMN seq SET NOT NULL;
        CREATE TABLE history_sequences (
          vault_id  integer PRIMARY KEY,
          last      bigint NOT NULL
        );
        INSERT INTO history_sequences (vault_id, last)
          SELECT vault_id, max(seq) FROM history_revisions GROUP BY vault_id;
        CREATE FUNCTION history_next_seq() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          INSERT INTO history_sequences AS s (vault_id, last) VALUES (NEW.vault_id, 1)
            ON CONFLICT (vault_id) DO UPDATE SET last = s.last + 1
            RETURNING s.last INTO NEW.seq;
          RETURN NEW;
        END $$;
        CREATE TRIGGER history_revisions_seq BEFORE INSERT ON history_revisions
          FOR EACH ROW EXECUTE FUNCTION history_next_seq();
        CREATE UNIQUE INDEX history_revisions_vault_seq ON history_revisions (vault_id, seq);
        DROP INDEX history_revisions_path;
        CREATE INDEX history_revisions_path ON history_revisions (vault_id, path, seq);
        CREATE INDEX history_revisions_from ON history_revisions (vault_id, from_path, seq) WHERE from_path IS NOT NULL;
      `.execute(db);
    },
    async down(db: Kysely<any>): Promise<void> {
      await sql`
        DROP TRIGGER history_revisions_seq ON history_revisions;
        DROP FUNCTION history_next_seq();
        DROP TABLE history_sequences;
        DROP INDEX history_revisions_from;
        DROP INDEX history_revisions_path;
        CREATE INDEX history_revisions_path ON history_revisions (vault_id, path, id);
        ALTER TABLE history_revisions DROP COLUMN client_id;
        ALTER TABLE history_revisions DROP COLUMN seq;
      `.execute(db);
    },
  },
};
