// Per-vault statistics for BM25 ranking: the vault's note count and total indexed length (for the average
// length), kept by the search contributor in the transaction that writes the keyword rows. Seeded here from
// the rows already stored so later deltas stay exact. Document frequencies are not stored: keeping them
// cost one upsert per distinct lexeme of every written note (6x the bulk index time); queries count them.
import { sql, type Kysely } from 'kysely';

export default {
  async up(db: Kysely<any>): Promise<void> {
    await sql`
      ALTER TABLE search_keyword ADD COLUMN body_len integer NOT NULL DEFAULT 0;
      CREATE TABLE search_keyword_stats (
        vault_id  integer PRIMARY KEY,
        docs      bigint NOT NULL,
        total_len bigint NOT NULL
      );
      INSERT INTO search_keyword_stats (vault_id, docs, total_len)
        SELECT vault_id, count(*), sum(body_len) FROM search_keyword GROUP BY vault_id;
    `.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`DROP TABLE search_keyword_stats; ALTER TABLE search_keyword DROP COLUMN body_len;`.execute(db);
  },
};
