// CJK bigrams arrive as a ready tsvector (keyword/cjk.ts splitCjk) with their own weights, B in the title and C in
// the body (the parsed words keep A and D), and the keyword body index leaves them out: it indexes
// ts_filter(tsv, '{a,d}'). A Chinese note holds a lexeme per distinct bigram, and inserting those into the body
// GIN index was most of a first index's keyword cost (the keyword rows of oldwinter x2 in a lab copy: 5.9–6.5 s
// before this layout, 2.6–3.1 s with it, 2.1–3.2 s for the same text with no bigrams at all). Queries rank from the
// in-memory index, which reads the vectors, not the GIN index; the SQL path finds CJK lexemes by reading the vectors
// (keyword/sql-path.ts bodyMatch). The 1-in-32 sample index keeps every lexeme (it estimates CJK document frequencies
// too, at 1/32 of the writes), and so does the title index (titles are short).
import { sql, type Kysely } from 'kysely';

/** Pending-list size in kB, as migration 0008 set it for the body index. */
const PENDING_LIST_KB = 1024;

export default {
  async up(db: Kysely<any>): Promise<void> {
    await sql`
      CREATE FUNCTION search_title_tsv(configs regconfig[], title text, title_cjk tsvector) RETURNS tsvector
      LANGUAGE plpgsql IMMUTABLE AS $fn$
      DECLARE r tsvector := ''::tsvector; c regconfig;
      BEGIN
        FOREACH c IN ARRAY configs LOOP
          r := r || (setweight(to_tsvector(c, coalesce(title, '')), 'A') || setweight(title_cjk, 'B'));
        END LOOP;
        RETURN r;
      END $fn$;
      CREATE FUNCTION search_note_tsv(configs regconfig[], title text, body text, title_cjk tsvector, body_cjk tsvector)
      RETURNS tsvector LANGUAGE plpgsql IMMUTABLE AS $fn$
      DECLARE r tsvector := ''::tsvector; c regconfig;
      BEGIN
        FOREACH c IN ARRAY configs LOOP
          r := r || (setweight(to_tsvector(c, coalesce(title, '')), 'A') || setweight(title_cjk, 'B'))
                 || (setweight(to_tsvector(c, coalesce(body, '')), 'D') || setweight(body_cjk, 'C'));
        END LOOP;
        RETURN r;
      END $fn$;
      DROP INDEX search_keyword_tsv;
    `.execute(db);
    await sql
      .raw(
        `CREATE INDEX search_keyword_tsv ON search_keyword USING gin (ts_filter(tsv, '{a,d}')) WITH (fastupdate = on, gin_pending_list_limit = ${PENDING_LIST_KB})`,
      )
      .execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`DROP INDEX search_keyword_tsv`.execute(db);
    await sql
      .raw(
        `CREATE INDEX search_keyword_tsv ON search_keyword USING gin (tsv) WITH (fastupdate = on, gin_pending_list_limit = ${PENDING_LIST_KB})`,
      )
      .execute(db);
    await sql`DROP FUNCTION search_title_tsv(regconfig[], text, tsvector); DROP FUNCTION search_note_tsv(regconfig[], text, text, tsvector, tsvector)`.execute(
      db,
    );
  },
};
