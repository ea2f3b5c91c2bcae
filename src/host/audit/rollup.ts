// Usage rollups (usage_hourly and usage_daily, migration 0008): the audit writer folds each batch of usage
// rows into one row per (hour or UTC day, vault, credential, tool, outcome, refusal code) with a fixed
// log-scale latency histogram, and the panel's Usage page estimates p50/p95 from summed buckets. Pure: `writeBatchSql` only builds
// the statement.
import { sql, type RawBuilder } from 'kysely';
import type { UsageRow } from './batch-writer.js';

/** Latency buckets: bucket k (1–22) holds [2^((k−4)/1.5), 2^((k−3)/1.5)) ms; 0 is below 0.157 ms, 23 from 6.5 s up. */
export const HIST_BUCKETS = 24;

export function bucketOf(ms: number): number {
  const b = Math.floor((1.5 * Math.log(Math.max(ms, 0.000001))) / Math.LN2) + 4;
  return Math.min(HIST_BUCKETS - 1, Math.max(0, b));
}

/** The lower bound in ms of bucket k (0 for the first). */
export function bucketLow(k: number): number {
  return k <= 0 ? 0 : 2 ** ((k - 4) / 1.5);
}

/**
 * The q-quantile (0–1) of the durations a summed histogram counts, interpolated log-linearly inside its
 * bucket: an estimate within one bucket's width (a factor of 1.59), never an exact percentile.
 */
export function histQuantile(hist: readonly number[], q: number): number {
  const total = hist.reduce((a, b) => a + b, 0);
  if (total === 0) return 0;
  const target = q * total;
  let seen = 0;
  for (let k = 0; k < hist.length; k++) {
    const n = hist[k] ?? 0;
    if (n > 0 && seen + n >= target) {
      const lo = k === 0 ? bucketLow(1) / 2 : bucketLow(k);
      const hi = k === hist.length - 1 ? lo * 2 ** (1 / 1.5) : bucketLow(k + 1);
      const f = Math.min(1, Math.max(0, (target - seen) / n));
      return lo * (hi / lo) ** f;
    }
    seen += n;
  }
  return bucketLow(hist.length - 1);
}

export interface RollupRow {
  period: Date;
  vaultId: number;
  credentialId: string;
  credentialName: string | null;
  tool: string;
  outcome: string;
  refusalCode: string;
  calls: number;
  errors: number;
  durationSum: number;
  lastAt: Date;
  hist: number[];
}

export const HOUR_MS = 3600_000;
export const DAY_MS = 86_400_000;

/** A batch of usage rows folded into one rollup row per period (an hour, a UTC day) and key (so one statement never updates a row twice). */
export function foldRollup(batch: readonly UsageRow[], periodMs: number = HOUR_MS): RollupRow[] {
  const out = new Map<string, RollupRow>();
  for (const r of batch) {
    const period = new Date(Math.floor(r.at.getTime() / periodMs) * periodMs);
    const key = `${period.getTime()}\u0000${r.vaultId ?? 0}\u0000${r.credentialId ?? ''}\u0000${r.tool}\u0000${r.outcome}\u0000${r.refusalCode ?? ''}`;
    let h = out.get(key);
    if (!h) {
      h = {
        period,
        vaultId: r.vaultId ?? 0,
        credentialId: r.credentialId ?? '',
        credentialName: r.credentialName,
        tool: r.tool,
        outcome: r.outcome,
        refusalCode: r.refusalCode ?? '',
        calls: 0,
        errors: 0,
        durationSum: 0,
        lastAt: r.at,
        hist: new Array<number>(HIST_BUCKETS).fill(0),
      };
      out.set(key, h);
    }
    h.calls++;
    if (r.outcome !== 'ok') h.errors++;
    h.durationSum += r.durationMs;
    if (r.at > h.lastAt) {
      h.lastAt = r.at;
      h.credentialName = r.credentialName ?? h.credentialName;
    }
    h.hist[bucketOf(r.durationMs)]++;
  }
  return [...out.values()];
}

/**
 * One statement that inserts the batch's usage_logs rows and upserts their hourly and daily rollups
 * (data-modifying CTEs, so all land or none): counts add up, histograms add bucket by bucket.
 */
export function writeBatchSql(batch: readonly UsageRow[]): RawBuilder<unknown> {
  const logs = batch.map(
    (r) =>
      sql`(${r.at}::timestamptz, ${r.vaultId}::int, ${r.credentialId}, ${r.credentialName}, ${r.tool}, ${r.family}, ${r.params}, ${r.durationMs}::float8, ${r.responseBytes}::int, ${r.outcome}, ${r.refusalCode}, ${r.resultCount ?? null}::int)`,
  );
  return sql`WITH logged AS (INSERT INTO usage_logs (at, vault_id, credential_id, credential_name, tool, family, params, duration_ms, response_bytes, outcome, refusal_code, result_count)
    VALUES ${sql.join(logs)}),
    hourly AS (${upsert('usage_hourly', foldRollup(batch, HOUR_MS))})
    ${upsert('usage_daily', foldRollup(batch, DAY_MS))}`;
}

function upsert(table: string, rows: readonly RollupRow[]): RawBuilder<unknown> {
  const values = rows.map(
    (h) =>
      sql`(${h.period}::timestamptz, ${h.vaultId}::int, ${h.credentialId}, ${h.credentialName}, ${h.tool}, ${h.outcome}, ${h.refusalCode}, ${h.calls}::int, ${h.errors}::int, ${h.durationSum}::float8, ${h.lastAt}::timestamptz, ${`{${h.hist.join(',')}}`}::int[])`,
  );
  return sql`INSERT INTO ${sql.table(table)} AS t (period, vault_id, credential_id, credential_name, tool, outcome, refusal_code, calls, errors, duration_ms_sum, last_at, hist)
    VALUES ${sql.join(values)}
    ON CONFLICT (period, vault_id, credential_id, tool, outcome, refusal_code) DO UPDATE SET
      calls = t.calls + excluded.calls, errors = t.errors + excluded.errors,
      duration_ms_sum = t.duration_ms_sum + excluded.duration_ms_sum,
      last_at = greatest(t.last_at, excluded.last_at),
      credential_name = CASE WHEN excluded.last_at >= t.last_at THEN coalesce(excluded.credential_name, t.credential_name) ELSE t.credential_name END,
      hist = ARRAY(SELECT a + b FROM unnest(t.hist, excluded.hist) WITH ORDINALITY AS x(a, b, i) ORDER BY i)`;
}
