// The history family's tables: content-addressed versions (one row per distinct content per vault) and
// the revisions that name them, with who, when and which tool. Only SQL PostgreSQL 15 understands.
import { sql, type Kysely } from 'kysely';
import type { FamilyMigration } from '../../src/sdk/types.js';

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
};
