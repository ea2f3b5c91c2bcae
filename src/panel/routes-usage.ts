// Usage, from usage_logs (the audit rows every tool call writes): calls per tool over time as a chart,
// errors and refusals by code, p50/p95 latency per tool (bucket estimates), and calls per credential —
// read from the hourly rollups (usage_hourly), bounded by the window and a LIMIT; a non-admin sees their
// own vault's rows only.
import type { FastifyInstance } from 'fastify';
import { sql, type Kysely } from 'kysely';
import { stackedBars, type Bucket } from './chart.js';
import { html } from './html.js';
import { page } from './layout.js';
import { me, type PanelContext } from './context.js';
import { DAY_MS, HIST_BUCKETS, HOUR_MS, histQuantile } from '../host/audit/rollup.js';

const WINDOWS: Readonly<Record<string, { hours: number; bucket: 'hour' | 'day'; label: string }>> = {
  '24h': { hours: 24, bucket: 'hour', label: 'last 24 hours' },
  '7d': { hours: 168, bucket: 'day', label: 'last 7 days' },
  '30d': { hours: 720, bucket: 'day', label: 'last 30 days' },
};

export interface UsageScope {
  /** The first period of the window (an hour or a UTC day). */
  readonly since: Date;
  /** Only this vault's rows (a non-admin's, or an admin looking at one user). */
  readonly vaultId?: number;
}

/**
 * Every aggregate of the window from the rollups written with each audit batch (usage_hourly for hour
 * buckets, usage_daily for day buckets), in one statement: a 30-day window sums at most 30 rows per key,
 * whatever the audit log holds. `since` is the first period's start. Latency percentiles are estimated from the summed log-scale
 * buckets (histQuantile).
 */
export async function usageReport(db: Kysely<any>, scope: UsageScope, bucket: 'hour' | 'day', limit: number) {
  const vault = scope.vaultId === undefined ? sql`` : sql`AND vault_id = ${scope.vaultId}`;
  const sums = sql.raw(Array.from({ length: HIST_BUCKETS }, (_, k) => `sum(hist[${k + 1}]) AS h${k}`).join(', '));
  const hist = sql.raw(`ARRAY[${Array.from({ length: HIST_BUCKETS }, (_, k) => `sum(h${k})`).join(', ')}]::float8[]`);
  const r = await sql<{
    part: string;
    k1: string | null;
    k2: string | null;
    k3: string | null;
    n: string;
    a: string | null;
    at: Date | null;
    h: number[] | null;
  }>`
    WITH r AS MATERIALIZED (SELECT tool, extract(epoch FROM period)::text AS b, outcome, refusal_code, credential_id, max(credential_name) AS cname,
        sum(calls) AS n, sum(errors) AS bad, max(last_at) AS last, ${sums}
      FROM ${sql.table(bucket === 'hour' ? 'usage_hourly' : 'usage_daily')} WHERE period >= ${scope.since}::timestamptz ${vault} GROUP BY 1, 2, 3, 4, 5)
    (SELECT 'series' AS part, tool AS k1, b AS k2, NULL AS k3, sum(n) AS n, NULL::numeric AS a, NULL::timestamptz AS at, NULL::float8[] AS h FROM r GROUP BY 2, 3 LIMIT 5000)
    UNION ALL (SELECT 'outcome', outcome, nullif(refusal_code, ''), NULL, sum(n), NULL, NULL, NULL FROM r WHERE outcome <> 'ok' GROUP BY 2, 3 ORDER BY 5 DESC LIMIT ${limit})
    UNION ALL (SELECT 'latency', tool, NULL, NULL, sum(n), NULL, NULL, ${hist} FROM r GROUP BY tool ORDER BY 5 DESC LIMIT ${limit})
    UNION ALL (SELECT 'credential', nullif(credential_id, ''), max(cname), NULL, sum(n), sum(bad), max(last), NULL FROM r GROUP BY credential_id ORDER BY 5 DESC LIMIT ${limit})`.execute(
    db,
  );
  const of = (part: string) => r.rows.filter((row) => row.part === part);
  return {
    series: of('series').map((x) => ({ b: new Date(Number(x.k2) * 1000), tool: x.k1!, n: x.n })),
    outcomes: of('outcome').map((x) => ({ outcome: x.k1!, code: x.k2, n: x.n })),
    latency: of('latency').map((x) => {
      const h = (x.h ?? []).map(Number);
      return { tool: x.k1!, n: x.n, p50: histQuantile(h, 0.5), p95: histQuantile(h, 0.95) };
    }),
    credentials: of('credential').map((x) => ({ name: x.k2 ?? x.k1, n: x.n, bad: String(x.a ?? 0), last: x.at! })),
  };
}

export function registerUsage(panel: FastifyInstance, ctx: PanelContext): void {
  panel.get('/usage', async (request, reply) => {
    const user = me(request);
    const subject = await ctx.userOf(request);
    const q = request.query as Record<string, string | undefined>;
    const win = WINDOWS[q.window ?? '24h'] ?? WINDOWS['24h'];
    const now = Date.now();
    // The window is whole periods (hours, or UTC days) ending with the current one: the chart's bars.
    const stepMs = win.bucket === 'hour' ? HOUR_MS : DAY_MS;
    const startAt = Math.floor((now - win.hours * 3600_000) / stepMs) * stepMs + stepMs;
    const since = new Date(startAt);
    const scope: UsageScope = { since, vaultId: user.admin && subject === user ? undefined : subject.vaultId };
    const r = await usageReport(ctx.db, scope, win.bucket, ctx.settings().host.panel.pageSize);

    // Buckets across the whole window (empty hours too), the five busiest tools as series, the rest as "other".
    const totals = new Map<string, number>();
    for (const row of r.series) totals.set(row.tool, (totals.get(row.tool) ?? 0) + Number(row.n));
    const top = [...totals]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([tool]) => tool);
    const series = totals.size > top.length ? [...top, 'other'] : top;
    const keyOf = (d: Date) => (win.bucket === 'hour' ? d.toISOString().slice(0, 13) : d.toISOString().slice(0, 10));
    const byKey = new Map<string, Record<string, number>>();
    for (const row of r.series) {
      const k = keyOf(new Date(row.b));
      const counts = byKey.get(k) ?? {};
      const s = top.includes(row.tool) ? row.tool : 'other';
      counts[s] = (counts[s] ?? 0) + Number(row.n);
      byKey.set(k, counts);
    }
    const buckets: Bucket[] = [];
    for (let at = startAt; at <= now; at += stepMs) {
      const d = new Date(at);
      buckets.push({
        label: win.bucket === 'hour' ? `${d.toISOString().slice(11, 13)}:00` : d.toISOString().slice(5, 10),
        counts: byKey.get(keyOf(d)) ?? {},
      });
    }
    const total = [...totals.values()].reduce((a, b) => a + b, 0);
    const frame = ctx.frame(request, reply, 'usage');
    const ms = (v: number) => `${Number(v).toFixed(v < 10 ? 1 : 0)} ms`;
    const body = html`<form method="get" action="/admin/usage" class="card"><label for="window">Window</label><select id="window" name="window">${Object.entries(
      WINDOWS,
    ).map(
      ([k, w]) => html`<option value="${k}"${w === win ? html` selected` : ''}>${w.label}</option>`,
    )}</select>${subject !== user ? html`<input type="hidden" name="user" value="${subject.name}">` : ''} <button type="submit" class="secondary">Show</button></form>
<section aria-labelledby="calls"><h2 id="calls">Calls per tool, ${win.label} (${String(total)} in all${scope.vaultId === undefined ? ', every vault' : `, vault ${subject.vaultName}`})</h2>
${total ? stackedBars(buckets, series, { title: `Tool calls per ${win.bucket}, ${win.label}` }) : html`<p class="muted">No tool calls in this window.</p>`}</section>
<div class="grid">
<section aria-labelledby="lat"><h2 id="lat">Latency per tool</h2><p class="muted">p50 and p95 are estimates from latency buckets (each about 1.6× wide), summed per ${win.bucket}.</p><div class="table-wrap"><table><thead><tr><th scope="col">Tool</th><th scope="col" class="num">Calls</th><th scope="col" class="num">p50</th><th scope="col" class="num">p95</th></tr></thead>
<tbody>${r.latency.map((l) => html`<tr><th scope="row">${l.tool}</th><td class="num">${String(l.n)}</td><td class="num">${ms(l.p50)}</td><td class="num">${ms(l.p95)}</td></tr>`)}</tbody></table></div></section>
<section aria-labelledby="err"><h2 id="err">Errors and refusals</h2>${
      r.outcomes.length
        ? html`<div class="table-wrap"><table><thead><tr><th scope="col">Outcome</th><th scope="col">Code</th><th scope="col" class="num">Calls</th></tr></thead><tbody>${r.outcomes.map((o) => html`<tr><td>${o.outcome}</td><td><code>${o.code ?? '-'}</code></td><td class="num">${String(o.n)}</td></tr>`)}</tbody></table></div>`
        : html`<p class="muted">None.</p>`
    }</section></div>
<section aria-labelledby="cred"><h2 id="cred">Per credential</h2><div class="table-wrap"><table><thead><tr><th scope="col">Credential</th><th scope="col" class="num">Calls</th><th scope="col" class="num">Errors and refusals</th><th scope="col">Last call</th></tr></thead>
<tbody>${r.credentials.map((c) => html`<tr><th scope="row">${c.name ?? '-'}</th><td class="num">${String(c.n)}</td><td class="num">${String(c.bad)}</td><td>${new Date(c.last).toISOString().slice(0, 16).replace('T', ' ')}</td></tr>`)}</tbody></table></div></section>`;
    return ctx.send(reply, 200, page(frame, 'Usage', body));
  });
}
