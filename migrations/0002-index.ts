// Host tables of the index pipeline: the version each contributor's rows were derived with (and the
// re-derive range still to do), and the file facts that let a quarantined note wait for a change.
import { sql, type Kysely } from 'kysely';

export default {
  async up(db: Kysely<any>): Promise<void> {
    await sql`
      CREATE TABLE index_contributor_state (
        vault_id        integer NOT NULL REFERENCES vaults(id) ON DELETE CASCADE,
        contributor     text NOT NULL,
        version         integer NOT NULL,
        derived_through bigint NOT NULL DEFAULT 0,
        target_through  bigint NOT NULL DEFAULT 0,
        updated_at      timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (vault_id, contributor)
      );
      ALTER TABLE quarantine ADD COLUMN size bigint;
      ALTER TABLE quarantine ADD COLUMN mtime timestamptz;
    `.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`ALTER TABLE quarantine DROP COLUMN mtime; ALTER TABLE quarantine DROP COLUMN size; DROP TABLE index_contributor_state;`.execute(
      db,
    );
  },
};
