// The transfer family's own tables: one row per minted link (upload or download), token stored hashed.
// Only SQL PostgreSQL 15 understands; never stores a raw token.
import { sql, type Kysely } from 'kysely';
import type { FamilyMigration } from '../../src/sdk/index.js';

export const migrations: Record<string, FamilyMigration> = {
  '0001-transfer-links': {
    async up(db: Kysely<any>): Promise<void> {
      await sql`
        CREATE TABLE transfer_links (
          id             text PRIMARY KEY,
          token_hash     text NOT NULL UNIQUE,
          kind           text NOT NULL CHECK (kind IN ('upload', 'download')),
          vault_id       integer NOT NULL,
          principal_kind text NOT NULL,
          principal_id   text NOT NULL,
          path           text NOT NULL,
          overwrite      boolean NOT NULL DEFAULT false,
          pinned         jsonb,
          max_bytes      bigint NOT NULL,
          state          text NOT NULL CHECK (state IN ('pending', 'claimed', 'completed', 'consumed', 'revoked')),
          created_at     timestamptz NOT NULL,
          expires_at     timestamptz NOT NULL,
          claimed_at     timestamptz,
          completed_at   timestamptz,
          result         jsonb
        );
        CREATE INDEX transfer_links_principal ON transfer_links (principal_id, created_at);
        CREATE INDEX transfer_links_expires ON transfer_links (expires_at);
      `.execute(db);
    },
    async down(db: Kysely<any>): Promise<void> {
      await sql`DROP TABLE transfer_links`.execute(db);
    },
  },
};
