// The keyword body index buffers its inserts again (GIN fastupdate, undoing 0002 for this index and its 1-in-32
// sample): a note's vector holds a lexeme per CJK bigram, and inserting each into the tree on every write was
// two thirds of a Chinese note's keyword write. Queries are answered from the in-memory index, which reads no GIN
// list; the SQL path still does, and the host's embedded maintenance merges the pending list every pass (a server's
// autovacuum does it there), so the list a query scans stays short. Title indexes keep fastupdate off (a few
// lexemes a note).
import { sql, type Kysely } from 'kysely';

/** Pending-list size in kB before an insert merges it itself (PostgreSQL's default is 4 MB). */
const PENDING_LIST_KB = 1024;
const INDEXES = ['search_keyword_tsv', 'search_keyword_tsv_sample'];

export default {
  async up(db: Kysely<any>): Promise<void> {
    for (const name of INDEXES)
      await sql
        .raw(`ALTER INDEX ${name} SET (fastupdate = on, gin_pending_list_limit = ${PENDING_LIST_KB})`)
        .execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    for (const name of INDEXES) {
      await sql`SELECT gin_clean_pending_list(${name}::regclass)`.execute(db);
      await sql.raw(`ALTER INDEX ${name} SET (fastupdate = off)`).execute(db);
      await sql.raw(`ALTER INDEX ${name} RESET (gin_pending_list_limit)`).execute(db);
    }
  },
};
