// The lower-cased file name of each note (the part after the last `/`), indexed per vault, so the panel's
// note view resolves a note's wikilinks by looking up only the notes whose file name a target could mean
// (src/panel/note-render.ts must use the same expression). Only SQL PostgreSQL 15 understands.
import { sql, type Kysely } from 'kysely';

export default {
  async up(db: Kysely<any>): Promise<void> {
    await sql`CREATE INDEX notes_vault_name_lower ON notes (vault_id, (lower(regexp_replace(path, '^.*/', ''))))`.execute(
      db,
    );
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`DROP INDEX notes_vault_name_lower`.execute(db);
  },
};
