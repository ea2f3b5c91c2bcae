// Per-vault term statistics for BM25 ranking: document frequency per lexeme, and the vault's note count and
// total indexed length (for the average length), kept by the search contributor in the transaction that
// writes the keyword rows. Seeded here from the rows already stored so later deltas stay exact.
import { sql, type Kysely } from 'kysely';

export default {
  async up(db: Kysely<any>): Promise<void> {
    await sql`
      ALTER TABLE search_keyword ADD COLUMN body_len integer NOT NULL DEFAULT 0;
      CREATE TABLE search_term_df (
        vault_id integer NOT NULL,
        lexeme   text NOT NULL,
        df       integer NOT NULL,
        PRIMARY KEY (vault_id, lexeme)
      );
      CREATE TABLE search_keyword_stats (
        vault_id  integer PRIMARY KEY,
        docs      bigint NOT NULL,
        total_len bigint NOT NULL
      );
      INSERT INTO search_term_df (vault_id, lexeme, df)
        SELECT k.vault_id, l.lexeme, count(*)::int FROM search_keyword k, unnest(tsvector_to_array(k.tsv)) AS l(lexeme) GROUP BY 1, 2;
      INSERT INTO search_keyword_stats (vault_id, docs, total_len)
        SELECT vault_id, count(*), sum(body_len) FROM search_keyword GROUP BY vault_id;
    `.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`DROP TABLE search_keyword_stats; DROP TABLE search_term_df; ALTER TABLE search_keyword DROP COLUMN body_len;`.execute(db);
  },
};
