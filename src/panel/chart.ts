// A server-rendered stacked bar chart as inline SVG (no script, no library): one bar per time bucket,
// one colour per series, each bar with a <title> a screen reader and a hover can read. Pure.
import { html, type Html } from './html.js';

export interface Bucket {
  readonly label: string;
  readonly counts: Readonly<Record<string, number>>;
}

/** Distinct colours with at least 3:1 contrast against white (WCAG non-text contrast). */
const COLOURS = ['#1f5fa8', '#b3541e', '#2e7d32', '#7b3fa0', '#a4161a', '#5c5c57'];

export function stackedBars(
  buckets: readonly Bucket[],
  series: readonly string[],
  o: { title: string; width?: number; height?: number },
): Html {
  const width = o.width ?? 720;
  const height = o.height ?? 220;
  const left = 40;
  const bottom = 28;
  const top = 10;
  const plotH = height - top - bottom;
  const max = Math.max(1, ...buckets.map((b) => series.reduce((n, s) => n + (b.counts[s] ?? 0), 0)));
  const step = (width - left - 8) / Math.max(1, buckets.length);
  const barW = Math.max(1, step * 0.8);
  const ticks = [0, Math.round(max / 2), max];
  const everyLabel = Math.max(1, Math.ceil(buckets.length / 8));
  return html`<svg class="chart" viewBox="0 0 ${String(width)} ${String(height)}" role="img" aria-label="${o.title}" xmlns="http://www.w3.org/2000/svg">
${ticks.map((v) => {
  const y = top + plotH - (v / max) * plotH;
  return html`<line x1="${String(left)}" x2="${String(width - 8)}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" stroke="#d6d6d0"/><text x="${String(left - 4)}" y="${(y + 4).toFixed(1)}" text-anchor="end">${String(v)}</text>`;
})}
${buckets.map((b, i) => {
  let y = top + plotH;
  const x = left + i * step + (step - barW) / 2;
  const total = series.reduce((n, s) => n + (b.counts[s] ?? 0), 0);
  const parts = series.map((s, si) => {
    const n = b.counts[s] ?? 0;
    if (!n) return '';
    const h = (n / max) * plotH;
    y -= h;
    return html`<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${barW.toFixed(1)}" height="${h.toFixed(1)}" fill="${COLOURS[si % COLOURS.length]}"><title>${b.label}: ${s} ${String(n)}</title></rect>`;
  });
  const label =
    i % everyLabel === 0
      ? html`<text x="${(x + barW / 2).toFixed(1)}" y="${String(height - 10)}" text-anchor="middle">${b.label}</text>`
      : '';
  return html`<g><title>${b.label}: ${String(total)} calls</title>${parts}${label}</g>`;
})}
</svg>
<ul class="legend">${series.map((s, si) => html`<li><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="${COLOURS[si % COLOURS.length]}"/></svg> ${s}</li>`)}</ul>`;
}
