// usage_logs keeps one index on its time, a BRIN one, and no other secondary index but the panel's
// partial one (0007). The btree indexes on (at) and (credential_id, at) answered no query since the panel
// reads the rollups (0008), and every tool call paid for them: they were about a third of an audit row's
// cost to the embedded engine (bench/audit). Rows arrive in time order, so a BRIN index (a few pages)
// still bounds a time range for an operator's own query.
import { sql, type Kysely } from 'kysely';

export default {
  async up(db: Kysely<any>): Promise<void> {
    // IF EXISTS: an operator may have dropped either already, and a start must not fail on that.
    await sql`DROP INDEX IF EXISTS usage_logs_credential_at; DROP INDEX IF EXISTS usage_logs_at;
      CREATE INDEX IF NOT EXISTS usage_logs_at_brin ON usage_logs USING brin (at)`.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`DROP INDEX usage_logs_at_brin; CREATE INDEX usage_logs_at ON usage_logs (at);
      CREATE INDEX usage_logs_credential_at ON usage_logs (credential_id, at)`.execute(db);
  },
};
