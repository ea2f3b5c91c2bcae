// The panel's pure parts: the html template escapes every value, the SVG chart escapes its labels and
// scales its bars, the post-sign-in redirect stays under /admin, and note links point at the panel only
// over https; the usage rollups' latency buckets, quantile estimates and folding; and /metrics' families'
// health (read once per scrape, every vault, declared backlogs) with plain-function sources, no server.
import t from 'tap';
import { html, raw } from '../../../src/panel/html.js';
import { stackedBars } from '../../../src/panel/chart.js';
import { safeNext } from '../../../src/panel/server.js';
import { noteViewUrl } from '../../../src/sdk/note-view-url.js';
import { bucketLow, bucketOf, DAY_MS, foldRollup, histQuantile, HIST_BUCKETS } from '../../../src/host/audit/rollup.js';
import type { UsageRow } from '../../../src/host/audit/batch-writer.js';
import { HostMetrics, type MetricsSources } from '../../../src/host/metrics/index.js';
import { backlogOf } from '../../../src/sdk/define-family.js';

t.test('html escapes interpolations unless they are Html', async (t) => {
  const evil = `<script>alert("x")</script>&'`;
  t.equal(
    html`<p title="${evil}">${evil}</p>`.value,
    '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</p>',
  );
  t.equal(
    html`<ul>${['a<', 'b'].map((x) => html`<li>${x}</li>`)}</ul>`.value,
    '<ul><li>a&lt;</li><li>b</li></ul>',
    'arrays of Html join unescaped, their values escaped',
  );
  t.equal(
    html`${raw('<b>ok</b>')}${null}${undefined}${false}${0}`.value,
    '<b>ok</b>0',
    'raw passes; null, undefined and false vanish',
  );
});

t.test('stackedBars: scaled bars, escaped labels, one title per bar', async (t) => {
  const svg = stackedBars(
    [
      { label: '10:00', counts: { read_note: 3, '<x>': 1 } },
      { label: '11:00', counts: { read_note: 1 } },
    ],
    ['read_note', '<x>'],
    { title: 'calls "per" hour', width: 200, height: 100 },
  ).value;
  t.match(svg, /aria-label="calls &quot;per&quot; hour"/);
  t.notMatch(svg, /<x>/, 'a series name is escaped');
  t.match(svg, /<title>10:00: 4 calls<\/title>/);
  const heights = [...svg.matchAll(/<rect x="[^"]+" y="[^"]+" width="[^"]+" height="([\d.]+)"/g)].map((m) =>
    Number(m[1]),
  );
  t.equal(heights.length, 3, 'one rect per non-zero count');
  t.ok(Math.abs(heights[0] - 3 * heights[2]) < 0.2, 'bar heights are proportional to counts');
  t.doesNotThrow(() => stackedBars([], [], { title: 'empty' }), 'an empty window draws an empty chart');
});

t.test('safeNext keeps the redirect after sign-in on the panel', async (t) => {
  t.equal(safeNext('/admin/usage?window=7d'), '/admin/usage?window=7d');
  t.equal(safeNext('/admin'), '/admin');
  for (const bad of ['https://evil.example/admin', '//evil.example/admin', '/adminx', '/mcp', '/admin\\..\\x', ''])
    t.equal(safeNext(bad), '/admin/', `refuses ${JSON.stringify(bad)}`);
});

t.test('noteViewUrl: the panel note view over https only', async (t) => {
  t.equal(
    noteViewUrl('https://notes.example.org', 'Projects/My Plan #1.md'),
    'https://notes.example.org/admin/notes/Projects/My%20Plan%20%231.md',
  );
  t.equal(noteViewUrl('https://notes.example.org/', 'a.md'), 'https://notes.example.org/admin/notes/a.md');
  t.equal(noteViewUrl('http://127.0.0.1:8080', 'a.md'), undefined);
  t.equal(noteViewUrl(null, 'a.md'), undefined);
});

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

t.test('backlogs per vault from one health read per scrape', async (t) => {
  let reads = 0;
  const sources: MetricsSources = {
    sessions: () => 0,
    subscriptions: () => 0,
    listenStreams: () => 0,
    vaults: () => ({}),
    workers: () => ({ threads: 1, queued: 0, completed: 0 }),
    audit: () => ({ pending: 0, written: 0, dropped: 0 }),
    pool: () => ({ total: 1, idle: 1, waiting: 0 }),
    familyHealth: async () => {
      reads++;
      return {
        main: { search: { semantic: true, queued: 3, stale: 2 }, history: { store_bytes: 10 } },
        other: { search: { semantic: false, queued: 7, stale: 0 } },
      };
    },
    backlogs: () => [
      { family: 'search', name: 'embedding', fields: ['queued', 'stale'], when: 'semantic', help: 'Notes to embed.' },
    ],
  };
  const m = new HostMetrics(sources);
  const text = (await m.render()).body;
  t.equal(reads, 1, 'one read for every gauge');
  t.match(text, /^exocortex_embedding_backlog\{vault="main"\} 5$/m, 'queued + stale of the vault');
  t.notMatch(text, /exocortex_embedding_backlog\{vault="other"\}/, 'no sample where semantic search is off');
  t.match(text, /^exocortex_family_health\{family="history",field="store_bytes",vault="main"\} 10$/m);
  t.match(text, /^exocortex_family_health\{family="search",field="semantic",vault="other"\} 0$/m);
  await m.render();
  t.equal(reads, 2, 'and one more for the next scrape');
  t.equal(backlogOf({ a: 1, b: 2 }, { fields: ['a', 'b'] }), 3);
  t.equal(backlogOf({ a: 1 }, { fields: ['a', 'b'] }), undefined, 'a missing field: no backlog');
  t.equal(backlogOf({ a: 1, on: false }, { fields: ['a'], when: 'on' }), undefined, 'off: no backlog');
  t.equal(backlogOf(undefined, { fields: ['a'] }), undefined);
});
