// A change stamp per vault for the in-memory scoring index (keyword/memory-index.ts): the contributor bumps
// search_keyword_stats.rev in the statement that writes a batch of keyword rows (or removes one) and stamps the rows
// it wrote with the new value. The stats row is locked by that upsert until commit, so stamps commit in order and
// any process can catch up by reading the rows stamped after the one it last saw, whoever wrote them.
import { sql, type Kysely } from 'kysely';

export default {
  async up(db: Kysely<any>): Promise<void> {
    await sql`
      ALTER TABLE search_keyword ADD COLUMN rev bigint NOT NULL DEFAULT 0;
      ALTER TABLE search_keyword_stats ADD COLUMN rev bigint NOT NULL DEFAULT 0;
      CREATE INDEX search_keyword_vault_rev ON search_keyword (vault_id, rev);
    `.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`DROP INDEX search_keyword_vault_rev; ALTER TABLE search_keyword_stats DROP COLUMN rev; ALTER TABLE search_keyword DROP COLUMN rev;`.execute(
      db,
    );
  },
};
