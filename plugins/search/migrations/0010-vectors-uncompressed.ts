// The keyword rows' vectors are stored out of line without compression (STORAGE EXTERNAL): a tsvector is a sorted
// list of distinct lexemes with their positions, which pglz almost never shrinks by the quarter it requires, so each
// vector over ~2 kB cost a compression attempt at insert that nearly always failed. Rows written before keep their
// storage; a vector is read alike either way. The body stays compressible (long note text does shrink).
import { sql, type Kysely } from 'kysely';

export default {
  async up(db: Kysely<any>): Promise<void> {
    await sql`ALTER TABLE search_keyword ALTER COLUMN tsv SET STORAGE EXTERNAL, ALTER COLUMN title_tsv SET STORAGE EXTERNAL`.execute(
      db,
    );
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`ALTER TABLE search_keyword ALTER COLUMN tsv SET STORAGE EXTENDED, ALTER COLUMN title_tsv SET STORAGE EXTENDED`.execute(
      db,
    );
  },
};
