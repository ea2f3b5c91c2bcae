// Usage rollups for the panel's Usage page: usage_hourly and usage_daily (UTC days) hold one row per
// (period, vault, credential, tool, outcome, refusal code) with the call count, errors and refusals,
// summed duration, the last call's time and a fixed log-scale latency histogram (24 buckets, see
// src/host/audit/rollup.ts), so a 30-day report sums a few thousand daily rows instead of every call.
// The audit writer upserts both in the same statement that inserts the usage_logs rows; existing rows
// are backfilled here. Keys are NOT NULL ('' / 0 for none) so ON CONFLICT sees one row per key. Nothing
// deletes from them when usage_logs rows go (they have no retention: one row per period and key is
// small). Only SQL PostgreSQL 15 understands.
import { sql, type Kysely } from 'kysely';

// The bucket of a duration in ms: floor(1.5 · log2(ms)) + 4, clamped to 0–23 (must match rollup.ts).
const BUCKET = sql.raw('least(23, greatest(0, floor(1.5 * ln(greatest(duration_ms, 0.000001)) / ln(2)) + 4))::int');
const HIST = sql.raw(
  `ARRAY[${Array.from({ length: 24 }, (_, k) => `count(*) FILTER (WHERE b = ${k})`).join(', ')}]::int[]`,
);

export default {
  async up(db: Kysely<any>): Promise<void> {
    for (const [table, unit] of [
      ['usage_hourly', 'hour'],
      ['usage_daily', 'day'],
    ] as const) {
      await sql`
        CREATE TABLE ${sql.table(table)} (
          period          timestamptz NOT NULL,
          vault_id        integer NOT NULL,
          credential_id   text NOT NULL,
          credential_name text,
          tool            text NOT NULL,
          outcome         text NOT NULL,
          refusal_code    text NOT NULL,
          calls           integer NOT NULL,
          errors          integer NOT NULL,
          duration_ms_sum double precision NOT NULL,
          last_at         timestamptz NOT NULL,
          hist            integer[] NOT NULL,
          PRIMARY KEY (period, vault_id, credential_id, tool, outcome, refusal_code)
        )`.execute(db);
      await sql`CREATE INDEX ${sql.raw(`${table}_vault_period`)} ON ${sql.table(table)} (vault_id, period)`.execute(db);
      await sql`
        INSERT INTO ${sql.table(table)} (period, vault_id, credential_id, credential_name, tool, outcome, refusal_code, calls, errors, duration_ms_sum, last_at, hist)
        SELECT date_trunc(${unit}, at, 'UTC'), coalesce(vault_id, 0), coalesce(credential_id, ''), max(credential_name), tool, outcome,
          coalesce(refusal_code, ''), count(*), count(*) FILTER (WHERE outcome <> 'ok'), sum(duration_ms), max(at), ${HIST}
        FROM (SELECT *, ${BUCKET} AS b FROM usage_logs) AS u
        GROUP BY 1, 2, 3, 5, 6, 7`.execute(db);
    }
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`DROP TABLE usage_hourly; DROP TABLE usage_daily`.execute(db);
  },
};
