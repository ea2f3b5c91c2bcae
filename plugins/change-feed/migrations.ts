// The change feed's tables: the append-only event log, the last seen state of every note, and
// retention bookkeeping. Only SQL PostgreSQL 15 understands.
import { sql, type Kysely } from 'kysely';
import type { FamilyMigration } from '../../src/sdk/index.js';

export const feedMigrations: Record<string, FamilyMigration> = {
  '0001-change-feed': {
    async up(db: Kysely<any>): Promise<void> {
      await sql`
        CREATE TABLE change_events (
          seq          bigserial PRIMARY KEY,
          vault_id     integer NOT NULL,
          at           timestamptz NOT NULL DEFAULT now(),
          kind         text NOT NULL CHECK (kind IN ('created', 'modified', 'moved', 'deleted', 'gap', 'reset')),
          path         text NOT NULL,
          from_path    text,
          reason       text,
          content_hash text,
          actor_kind   text NOT NULL DEFAULT 'human',
          actor_id     text,
          actor_name   text,
          count        integer
        );
        CREATE INDEX change_events_vault_seq ON change_events (vault_id, seq);
        CREATE INDEX change_events_vault_at ON change_events (vault_id, at);
        CREATE TABLE change_feed_state (
          note_id      bigint PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
          vault_id     integer NOT NULL,
          path         text NOT NULL,
          content_hash text NOT NULL
        );
        CREATE TABLE change_feed_meta (
          vault_id        integer PRIMARY KEY,
          pruned_through  bigint NOT NULL DEFAULT 0,
          since_prune     integer NOT NULL DEFAULT 0
        );
      `.execute(db);
    },
    async down(db: Kysely<any>): Promise<void> {
      await sql`DROP TABLE change_events; DROP TABLE change_feed_state; DROP TABLE change_feed_meta;`.execute(db);
    },
  },
  '0002-change-feed-building': {
    async up(db: Kysely<any>): Promise<void> {
      // Set while the index is built from empty (after a reset event): first sightings are not itemised.
      await sql`ALTER TABLE change_feed_meta ADD COLUMN building boolean NOT NULL DEFAULT false`.execute(db);
    },
    async down(db: Kysely<any>): Promise<void> {
      await sql`ALTER TABLE change_feed_meta DROP COLUMN building`.execute(db);
    },
  },
};
