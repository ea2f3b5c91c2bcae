// Periodic-note paths: the period containing a date (shifted by an offset) and its file path under a
// moment.js-style format. Pure date arithmetic in the server's local time; no I/O here.
import { formatMoment } from '../../../src/sdk/index.js';
import type { Granularity, PeriodicDefault } from '../settings.js';

/** Format a date with the moment.js tokens periodic notes use, in the server's local time; `[text]` is literal. */
export function formatDate(d: Date, format: string): string {
  return formatMoment(d, format);
}

/** Start of the period containing `now`, shifted by `offset` periods. */
export function periodStart(now: Date, g: Granularity, offset: number): Date {
  const y = now.getFullYear();
  const m = now.getMonth();
  switch (g) {
    case 'daily':
      return new Date(y, m, now.getDate() + offset);
    case 'weekly':
      return new Date(y, m, now.getDate() - now.getDay() + 7 * offset);
    case 'monthly':
      return new Date(y, m + offset, 1);
    case 'quarterly':
      return new Date(y, Math.floor(m / 3) * 3 + 3 * offset, 1);
    default:
      return new Date(y + offset, 0, 1);
  }
}

export function periodicPath(cfg: PeriodicDefault, date: Date): string {
  const folder = cfg.folder.replace(/^\/+|\/+$/g, '');
  const name = formatDate(date, cfg.format);
  return `${folder ? `${folder}/` : ''}${name}.md`;
}

/** Settings from the periodic-notes plugin's data.json or the core daily-notes.json, over our defaults. */
export function mergePeriodicConfig(
  defaults: Record<Granularity, PeriodicDefault>,
  plugin: unknown,
  coreDaily: unknown,
): Record<Granularity, PeriodicDefault> & { source: string } {
  const out = { ...defaults, source: 'defaults' } as Record<Granularity, PeriodicDefault> & { source: string };
  const pick = (v: unknown): Partial<PeriodicDefault> => {
    if (typeof v !== 'object' || v === null) return {};
    const o = v as { folder?: unknown; format?: unknown; enabled?: unknown };
    return {
      ...(typeof o.folder === 'string' ? { folder: o.folder } : {}),
      ...(typeof o.format === 'string' && o.format ? { format: o.format } : {}),
    };
  };
  if (coreDaily) {
    out.daily = { ...out.daily, ...pick(coreDaily) };
    out.source = 'core daily-notes settings';
  }
  if (plugin && typeof plugin === 'object') {
    for (const g of ['daily', 'weekly', 'monthly', 'quarterly', 'yearly'] as const) {
      const v = (plugin as Record<string, unknown>)[g];
      if (v) out[g] = { ...out[g], ...pick(v) };
    }
    out.source = 'periodic-notes plugin settings';
  }
  return out;
}
