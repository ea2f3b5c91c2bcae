// Users and their vaults: a user is bound to one vault and owns API keys; a vault serves one user
// unless the operator marks it shared. Existing keys move to an implicit `operator` user per vault.
// Only SQL that PostgreSQL 15 understands (PGlite is 18, CI's server is 15).
import { sql, type Kysely } from 'kysely';

export default {
  async up(db: Kysely<any>): Promise<void> {
    await sql`
      ALTER TABLE vaults ADD COLUMN shared boolean NOT NULL DEFAULT false;
      ALTER TABLE vaults ADD COLUMN source text NOT NULL DEFAULT 'cli' CHECK (source IN ('implicit', 'config', 'cli'));
      CREATE TABLE users (
        id          serial PRIMARY KEY,
        name        text NOT NULL UNIQUE,
        vault_id    integer REFERENCES vaults(id) ON DELETE SET NULL,
        is_admin    boolean NOT NULL DEFAULT false,
        source      text NOT NULL DEFAULT 'cli' CHECK (source IN ('implicit', 'config', 'cli')),
        disabled_at timestamptz,
        created_at  timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX users_vault ON users (vault_id);
      ALTER TABLE api_keys ADD COLUMN user_id integer REFERENCES users(id) ON DELETE CASCADE;
      CREATE INDEX api_keys_user ON api_keys (user_id);
    `.execute(db);
    // Before users existed every key served its vault's operator: keep it so, one implicit user per vault.
    await sql`
      INSERT INTO users (name, vault_id, is_admin, source)
      SELECT CASE WHEN v.id = (SELECT min(id) FROM vaults) THEN 'operator' ELSE 'operator-' || v.id END, v.id, true, 'implicit'
      FROM vaults v ORDER BY v.id;
      UPDATE vaults SET source = 'implicit';
      UPDATE api_keys k SET user_id = u.id FROM users u WHERE u.vault_id = k.vault_id;
    `.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`
      ALTER TABLE api_keys DROP COLUMN user_id;
      DROP TABLE users;
      ALTER TABLE vaults DROP COLUMN source;
      ALTER TABLE vaults DROP COLUMN shared;
    `.execute(db);
  },
};
