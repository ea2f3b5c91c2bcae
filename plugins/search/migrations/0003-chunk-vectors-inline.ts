// Chunk vectors stored inline (STORAGE MAIN) instead of pgvector's default out-of-line TOAST: an exact
// scan then reads each vector from the heap page it ranks, not through the TOAST index (PGlite, 30k×1024:
// exact p50 330 → 134 ms, bench/semantic.ts). MAIN still moves a vector out of line when a row cannot fit a page.
import { sql, type Kysely } from 'kysely';

async function hasChunks(db: Kysely<any>): Promise<boolean> {
  const r = await sql<{ t: string | null }>`SELECT to_regclass('search_chunks')::text AS t`.execute(db);
  return !!r.rows[0]?.t;
}

export default {
  // Rows already stored keep their TOAST form until their note is embedded again.
  async up(db: Kysely<any>): Promise<void> {
    if (await hasChunks(db)) await sql`ALTER TABLE search_chunks ALTER COLUMN embedding SET STORAGE MAIN`.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    if (await hasChunks(db))
      await sql`ALTER TABLE search_chunks ALTER COLUMN embedding SET STORAGE EXTERNAL`.execute(db);
  },
};
