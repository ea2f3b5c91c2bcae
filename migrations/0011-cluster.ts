// Daily quotas counted in the database (every process, every restart), and, for several processes on one
// PostgreSQL server: the live processes (each one's internal address, for
// forwarding a vault's calls to its owner) and one lease row per vault, whose epoch is the fencing token
// a takeover bumps. Who owns a vault is decided by a session advisory lock, never by these rows alone:
// a row names the last owner, the lock says whether it still holds the vault. The embedded engine has one
// process by construction and never reads them.
import { sql, type Kysely } from 'kysely';

export default {
  async up(db: Kysely<any>): Promise<void> {
    await sql`
      CREATE TABLE cluster_processes (
        id           text PRIMARY KEY,
        internal_url text,
        bids         boolean NOT NULL,
        pid          integer NOT NULL,
        hostname     text NOT NULL,
        started_at   timestamptz NOT NULL DEFAULT now(),
        seen_at      timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE admission_quota (
        key  text NOT NULL,
        day  date NOT NULL,
        n    integer NOT NULL,
        PRIMARY KEY (key, day)
      );
      CREATE TABLE vault_leases (
        vault_id    integer PRIMARY KEY REFERENCES vaults(id) ON DELETE CASCADE,
        owner       text NOT NULL,
        epoch       bigint NOT NULL,
        acquired_at timestamptz NOT NULL DEFAULT now()
      );
    `.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`DROP TABLE vault_leases; DROP TABLE cluster_processes; DROP TABLE admission_quota;`.execute(db);
  },
};
