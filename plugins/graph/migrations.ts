// The graph family's tables: one node row per indexed note (its name keys) and one row per link.
// Only SQL PostgreSQL 15 understands; never touches host tables beyond foreign keys to notes.
import { sql, type Kysely } from 'kysely';
import type { FamilyMigration } from '../../src/sdk/index.js';

export const graphMigrations: Record<string, FamilyMigration> = {
  '0001-graph': {
    async up(db: Kysely<any>): Promise<void> {
      await sql`
        CREATE TABLE graph_nodes (
          note_id         bigint PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
          vault_id        integer NOT NULL,
          path            text NOT NULL,
          name_key        text NOT NULL,
          link_count      integer NOT NULL DEFAULT 0,
          links_truncated boolean NOT NULL DEFAULT false,
          fm_error        text
        );
        CREATE INDEX graph_nodes_name ON graph_nodes (vault_id, name_key);
        CREATE TABLE graph_aliases (
          note_id  bigint NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
          vault_id integer NOT NULL,
          key      text NOT NULL,
          PRIMARY KEY (note_id, key)
        );
        CREATE INDEX graph_aliases_key ON graph_aliases (vault_id, key);
        CREATE TABLE graph_links (
          id             bigserial PRIMARY KEY,
          vault_id       integer NOT NULL,
          source_id      bigint NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
          ord            integer NOT NULL,
          kind           text NOT NULL,
          embed          boolean NOT NULL DEFAULT false,
          raw            text NOT NULL,
          target         text NOT NULL,
          name_key       text NOT NULL,
          target_key     text NOT NULL,
          anchor         text,
          block_ref      text,
          alias          text,
          start_offset   integer NOT NULL,
          line           integer NOT NULL,
          in_frontmatter boolean NOT NULL DEFAULT false,
          attachment     boolean NOT NULL DEFAULT false,
          target_id      bigint REFERENCES notes(id) ON DELETE SET NULL,
          ambiguous      boolean NOT NULL DEFAULT false,
          candidates     jsonb NOT NULL DEFAULT '[]'
        );
        CREATE INDEX graph_links_source ON graph_links (source_id, ord);
        CREATE INDEX graph_links_target ON graph_links (target_id, source_id) WHERE target_id IS NOT NULL;
        CREATE INDEX graph_links_name ON graph_links (vault_id, name_key);
        CREATE INDEX graph_links_tkey ON graph_links (vault_id, target_key);
      `.execute(db);
    },
    async down(db: Kysely<any>): Promise<void> {
      await sql`DROP TABLE graph_links; DROP TABLE graph_aliases; DROP TABLE graph_nodes;`.execute(db);
    },
  },
  // Names whose links a bulk index batch left for its pass's end to re-resolve (contributor.ts, SWEEP_FROM): queued
  // in the batch's transaction, so a process that stops before the pass ends leaves them for the next one.
  '0002-pending-names': {
    async up(db: Kysely<any>): Promise<void> {
      await sql`
        CREATE TABLE graph_pending (
          vault_id integer NOT NULL,
          name_key text NOT NULL,
          PRIMARY KEY (vault_id, name_key)
        );
      `.execute(db);
    },
    async down(db: Kysely<any>): Promise<void> {
      await sql`DROP TABLE graph_pending;`.execute(db);
    },
  },
};
