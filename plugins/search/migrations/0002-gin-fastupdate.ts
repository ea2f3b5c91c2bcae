// Keyword GIN indexes without a pending list. With fastupdate on, new entries wait in a list every
// search scans linearly until VACUUM merges it; PGlite runs no autovacuum, so after a bulk index that
// scan cost 2–5 ms per index per query (measured, 9,868 notes). Flushes what is pending now.
import { sql, type Kysely } from 'kysely';

const INDEXES = ['search_keyword_tsv', 'search_keyword_title_tsv', 'search_keyword_title_keys'];

export default {
  async up(db: Kysely<any>): Promise<void> {
    for (const name of INDEXES) {
      await sql`SELECT gin_clean_pending_list(${name}::regclass)`.execute(db);
      await sql.raw(`ALTER INDEX ${name} SET (fastupdate = off)`).execute(db);
    }
  },
  async down(db: Kysely<any>): Promise<void> {
    for (const name of INDEXES) await sql.raw(`ALTER INDEX ${name} SET (fastupdate = on)`).execute(db);
  },
};
