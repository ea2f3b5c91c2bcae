// Periodic-note paths: the period containing a date (shifted by an offset) and its file path under a
// moment.js-style format. Pure date arithmetic in the server's local time; no I/O here.
import type { Granularity, PeriodicDefault } from '../settings.js';

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** ISO week number and ISO week-year (weeks start Monday; week 1 holds Jan 4). */
function isoWeek(d: Date): { week: number; year: number } {
  const t = new Date(d.getFullYear(), d.getMonth(), d.getDate());
  const day = (t.getDay() + 6) % 7;
  t.setDate(t.getDate() - day + 3);
  const firstThursday = new Date(t.getFullYear(), 0, 4);
  const week =
    1 + Math.round(((t.getTime() - firstThursday.getTime()) / 86_400_000 - 3 + ((firstThursday.getDay() + 6) % 7)) / 7);
  return { week, year: t.getFullYear() };
}

/** moment's default (en) locale week: weeks start Sunday; week 1 holds Jan 1. */
function localeWeek(d: Date): { week: number; year: number } {
  const start = new Date(d.getFullYear(), d.getMonth(), d.getDate() - d.getDay());
  const end = new Date(start.getFullYear(), start.getMonth(), start.getDate() + 6);
  const year = end.getFullYear() > start.getFullYear() ? end.getFullYear() : start.getFullYear();
  const jan1 = new Date(year, 0, 1);
  const week1Start = new Date(year, 0, 1 - jan1.getDay());
  return { week: 1 + Math.round((start.getTime() - week1Start.getTime()) / (7 * 86_400_000)), year };
}

/** Format a date with the moment.js tokens periodic notes use; `[text]` is literal. */
export function formatDate(d: Date, format: string): string {
  const tokens = /\[([^\]]*)]|YYYY|YY|gggg|GGGG|MMMM|MMM|MM|M|DDDD|DD|D|dddd|ddd|Do|ww|w|WW|W|Q/g;
  return format.replace(tokens, (tok, literal: string | undefined) => {
    if (literal !== undefined) return literal;
    switch (tok) {
      case 'YYYY':
        return String(d.getFullYear());
      case 'YY':
        return pad(d.getFullYear() % 100);
      case 'gggg':
        return String(localeWeek(d).year);
      case 'GGGG':
        return String(isoWeek(d).year);
      case 'MMMM':
        return MONTHS[d.getMonth()];
      case 'MMM':
        return MONTHS[d.getMonth()].slice(0, 3);
      case 'MM':
        return pad(d.getMonth() + 1);
      case 'M':
        return String(d.getMonth() + 1);
      case 'DD':
        return pad(d.getDate());
      case 'D':
        return String(d.getDate());
      case 'DDDD':
        return pad(
          1 +
            Math.round(
              (new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime() -
                new Date(d.getFullYear(), 0, 1).getTime()) /
                86_400_000,
            ),
          3,
        );
      case 'dddd':
        return DAYS[d.getDay()];
      case 'ddd':
        return DAYS[d.getDay()].slice(0, 3);
      case 'Do': {
        const n = d.getDate();
        const s =
          n % 10 === 1 && n !== 11 ? 'st' : n % 10 === 2 && n !== 12 ? 'nd' : n % 10 === 3 && n !== 13 ? 'rd' : 'th';
        return `${n}${s}`;
      }
      case 'ww':
        return pad(localeWeek(d).week);
      case 'w':
        return String(localeWeek(d).week);
      case 'WW':
        return pad(isoWeek(d).week);
      case 'W':
        return String(isoWeek(d).week);
      case 'Q':
        return String(Math.floor(d.getMonth() / 3) + 1);
      default:
        return tok;
    }
  });
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
