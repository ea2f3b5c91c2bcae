// Per-family scopes and per-user limits: a key's scope becomes a space-separated list checked by the
// code (src/sdk/scopes.ts) instead of a two-value CHECK, and a user may carry limits that override the
// operator's per-user defaults (admission.perUser). Only SQL that PostgreSQL 15 understands.
import { sql, type Kysely } from 'kysely';

export default {
  async up(db: Kysely<any>): Promise<void> {
    await sql`
      ALTER TABLE api_keys DROP CONSTRAINT IF EXISTS api_keys_scope_check;
      ALTER TABLE users ADD COLUMN limits jsonb NOT NULL DEFAULT '{}'::jsonb;
    `.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`
      ALTER TABLE users DROP COLUMN limits;
      UPDATE api_keys SET scope = CASE WHEN scope LIKE '%write%' OR scope LIKE '%:*%' THEN 'readwrite' ELSE 'read' END;
      ALTER TABLE api_keys ADD CONSTRAINT api_keys_scope_check CHECK (scope IN ('read', 'readwrite'));
    `.execute(db);
  },
};
