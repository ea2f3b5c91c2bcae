// Notes whose deferred contributors' rows are not written yet. A write-through commits the note and its
// other rows first and answers its caller; the rows of contributors marked `deferred` (the keyword index)
// follow in a second transaction. A row here is written with the first and deleted with the second, so a
// process that stops between them leaves a mark, and the next start re-derives those notes.
import { sql, type Kysely } from 'kysely';

export default {
  async up(db: Kysely<any>): Promise<void> {
    await sql`
      CREATE TABLE index_deferred (
        note_id  bigint PRIMARY KEY REFERENCES notes(id) ON DELETE CASCADE,
        vault_id integer NOT NULL REFERENCES vaults(id) ON DELETE CASCADE
      );
    `.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`DROP TABLE index_deferred`.execute(db);
  },
};
