// The hourly usage rollups' pure parts: the log-scale latency buckets, the quantile estimate from summed
// buckets (within one bucket's width of the exact percentile), and a batch folded into one row per key.
import t from 'tap';
import { bucketLow, bucketOf, DAY_MS, foldRollup, histQuantile, HIST_BUCKETS } from '../../../src/host/audit/rollup.js';
import type { UsageRow } from '../../../src/host/audit/batch-writer.js';

t.test('buckets are log-scale, clamped, and agree with their bounds', async (t) => {
  t.equal(bucketOf(0), 0);
  t.equal(bucketOf(-5), 0);
  t.equal(bucketOf(1e9), HIST_BUCKETS - 1);
  for (let k = 1; k < HIST_BUCKETS; k++) {
    t.equal(bucketOf(bucketLow(k) * 1.0001), k, `the lower bound of ${k} is in ${k}`);
    t.equal(bucketOf(bucketLow(k) * 0.9999), k - 1, `just under it is in ${k - 1}`);
  }
  t.ok(bucketLow(HIST_BUCKETS - 1) > 6000, 'the last bucket starts past 6 s');
});

t.test('quantiles from buckets stay within a bucket of the exact value', async (t) => {
  const durations = Array.from({ length: 5000 }, (_, i) => 0.5 + ((i * 7919) % 5000) / 10);
  const hist = new Array<number>(HIST_BUCKETS).fill(0);
  for (const d of durations) hist[bucketOf(d)]++;
  const sorted = [...durations].sort((a, b) => a - b);
  for (const q of [0.5, 0.95]) {
    const exact = sorted[Math.floor(q * (sorted.length - 1))];
    const est = histQuantile(hist, q);
    t.ok(est / exact < 1.6 && exact / est < 1.6, `q${q}: ${est.toFixed(1)} ms for ${exact.toFixed(1)} ms`);
  }
  t.equal(histQuantile(new Array(HIST_BUCKETS).fill(0), 0.5), 0, 'an empty histogram says 0');
});

t.test('a batch folds into one row per period and key', async (t) => {
  const base: UsageRow = {
    at: new Date('2026-05-01T10:15:00Z'),
    vaultId: 1,
    credentialId: 'k1',
    credentialName: 'old name',
    tool: 'read_note',
    family: 'notes',
    params: '{}',
    durationMs: 3,
    responseBytes: 10,
    outcome: 'ok',
    refusalCode: null,
  };
  const rows = foldRollup([
    base,
    { ...base, at: new Date('2026-05-01T10:45:00Z'), durationMs: 5, credentialName: 'new name' },
    { ...base, at: new Date('2026-05-01T11:01:00Z') },
    { ...base, outcome: 'refused', refusalCode: 'rate_limited' },
    { ...base, vaultId: null, credentialId: null },
  ]);
  t.equal(rows.length, 4);
  const first = rows[0];
  t.equal(first.period.toISOString(), '2026-05-01T10:00:00.000Z');
  t.equal(first.calls, 2);
  t.equal(first.durationSum, 8);
  t.equal(first.credentialName, 'new name', "the newest call's credential name");
  t.equal(first.lastAt.toISOString(), '2026-05-01T10:45:00.000Z');
  t.equal(
    first.hist.reduce((a, b) => a + b, 0),
    2,
  );
  t.equal(rows[2].errors, 1, 'a refusal counts as an error');
  t.equal(rows[2].refusalCode, 'rate_limited');
  t.same([rows[3].vaultId, rows[3].credentialId, rows[3].refusalCode], [0, '', ''], 'no vault / credential: 0 and ""');
  const daily = foldRollup(
    [base, { ...base, at: new Date('2026-05-01T23:59:00Z') }, { ...base, at: new Date('2026-05-02T00:00:00Z') }],
    DAY_MS,
  );
  t.same(
    daily.map((d) => [d.period.toISOString(), d.calls]),
    [
      ['2026-05-01T00:00:00.000Z', 2],
      ['2026-05-02T00:00:00.000Z', 1],
    ],
    'daily rollups are UTC days',
  );
});
