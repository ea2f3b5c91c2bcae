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

/** A duration in whole microseconds: what the log keeps, and what the rollups sum and bucket (as the backfill does). */
function micros(ms: number): number {
  return Number.isFinite(ms) ? Math.round(ms * 1000) : 0;
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
    const ms = micros(r.durationMs) / 1000;
    h.calls++;
    if (r.outcome !== 'ok') h.errors++;
    h.durationSum += ms;
    if (r.at > h.lastAt) {
      h.lastAt = r.at;
      h.credentialName = r.credentialName ?? h.credentialName;
    }
    h.hist[bucketOf(ms)]++;
  }
  return [...out.values()];
}

/** A usage row's columns that repeat from call to call: a batch sends each distinct combination once. */
function repeatKey(r: UsageRow): string {
  return `${r.vaultId ?? ''}\u0000${r.credentialId ?? '\u0001'}\u0000${r.credentialName ?? '\u0001'}\u0000${r.tool}\u0000${r.family ?? '\u0001'}\u0000${r.outcome}\u0000${r.refusalCode ?? '\u0001'}`;
}

/**
 * One statement that inserts the batch's usage_logs rows and upserts their hourly and daily rollups
 * (data-modifying CTEs, so all land or none): counts add up, histograms add bucket by bucket. Each table's
 * rows travel as one array per column (unnest), so the text is the same for every batch: the embedded
 * engine prepares it once, and a batch is a fixed number of parameters whatever its size.
 * What the embedded engine spends is mostly parsing those arrays' elements (bench/audit prints the cost per
 * type), so a row travels lean: its time as milliseconds after the batch's first row and its duration as whole
 * microseconds (integers parse several times faster than timestamps and floats), and the columns that repeat
 * from call to call (vault, credential, tool, family, outcome, refusal code) as an index into a dictionary of
 * the batch's distinct combinations, joined back by the statement (in the batch's order, so ids follow the calls).
 */
export function writeBatchSql(batch: readonly UsageRow[]): RawBuilder<unknown> {
  const index = new Map<string, number>();
  const distinct: UsageRow[] = [];
  const keys = batch.map((r) => {
    const key = repeatKey(r);
    let n = index.get(key);
    if (n === undefined) {
      distinct.push(r);
      n = distinct.length;
      index.set(key, n);
    }
    return n;
  });
  const base = batch[0]?.at.getTime() ?? 0;
  const col = <T>(pick: (r: UsageRow) => T) => batch.map(pick);
  const dict = <T>(pick: (r: UsageRow) => T) => distinct.map(pick);
  return sql`WITH logged AS (INSERT INTO usage_logs (at, vault_id, credential_id, credential_name, tool, family, params, duration_ms, response_bytes, outcome, refusal_code, result_count)
    SELECT to_timestamp((${base}::int8 + u.at_ms)::float8 / 1000), k.vault_id, k.credential_id, k.credential_name, k.tool, k.family,
      u.params, u.duration_us::float8 / 1000, u.response_bytes, k.outcome, k.refusal_code, u.result_count
    FROM unnest(${col((r) => r.at.getTime() - base)}::int8[], ${keys}::int[], ${col((r) => r.params)}::text[],
      ${col((r) => micros(r.durationMs))}::int8[], ${col((r) => r.responseBytes)}::int[], ${col((r) => r.resultCount ?? null)}::int[])
      WITH ORDINALITY AS u(at_ms, k, params, duration_us, response_bytes, result_count, ord)
    JOIN unnest(${dict((r) => r.vaultId)}::int[], ${dict((r) => r.credentialId)}::text[], ${dict((r) => r.credentialName)}::text[],
      ${dict((r) => r.tool)}::text[], ${dict((r) => r.family)}::text[], ${dict((r) => r.outcome)}::text[], ${dict((r) => r.refusalCode)}::text[])
      WITH ORDINALITY AS k(vault_id, credential_id, credential_name, tool, family, outcome, refusal_code, n) ON k.n = u.k
    ORDER BY u.ord),
    hourly AS (${upsert('usage_hourly', foldRollup(batch, HOUR_MS))})
    ${upsert('usage_daily', foldRollup(batch, DAY_MS))}`;
}

function upsert(table: 'usage_hourly' | 'usage_daily', rows: readonly RollupRow[]): RawBuilder<unknown> {
  const col = <T>(pick: (h: RollupRow) => T) => rows.map(pick);
  // A histogram travels as its array literal and is cast per row: unnest would flatten an int[][].
  return sql`INSERT INTO ${sql.table(table)} AS t (period, vault_id, credential_id, credential_name, tool, outcome, refusal_code, calls, errors, duration_ms_sum, last_at, hist)
    SELECT period, vault_id, credential_id, credential_name, tool, outcome, refusal_code, calls, errors, duration_ms_sum, last_at, hist::int[]
    FROM unnest(${col((h) => h.period)}::timestamptz[], ${col((h) => h.vaultId)}::int[], ${col((h) => h.credentialId)}::text[],
      ${col((h) => h.credentialName)}::text[], ${col((h) => h.tool)}::text[], ${col((h) => h.outcome)}::text[], ${col((h) => h.refusalCode)}::text[],
      ${col((h) => h.calls)}::int[], ${col((h) => h.errors)}::int[], ${col((h) => h.durationSum)}::float8[], ${col((h) => h.lastAt)}::timestamptz[],
      ${col((h) => `{${h.hist.join(',')}}`)}::text[])
      AS u(period, vault_id, credential_id, credential_name, tool, outcome, refusal_code, calls, errors, duration_ms_sum, last_at, hist)
    ON CONFLICT (period, vault_id, credential_id, tool, outcome, refusal_code) DO UPDATE SET
      calls = t.calls + excluded.calls, errors = t.errors + excluded.errors,
      duration_ms_sum = t.duration_ms_sum + excluded.duration_ms_sum,
      last_at = greatest(t.last_at, excluded.last_at),
      credential_name = CASE WHEN excluded.last_at >= t.last_at THEN coalesce(excluded.credential_name, t.credential_name) ELSE t.credential_name END,
      hist = ARRAY(SELECT a + b FROM unnest(t.hist, excluded.hist) WITH ORDINALITY AS x(a, b, i) ORDER BY i)`;
}
