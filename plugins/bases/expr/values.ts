// The typed values of the Bases expression language (dates, durations, links, files, lists, objects) and
// their comparison, truthiness and JSON cells. Pure: no I/O; "now" comes from the caller.

/** One file of the vault as a base sees it (a note carries its properties; an attachment has none). */
export interface FileRecord {
  readonly path: string;
  readonly size: number;
  readonly mtimeMs: number;
  /** Creation time when known (null: not looked up; the evaluator asks the query's loader). */
  ctimeMs: number | null;
  /** Lower-cased tag identities without `#` (frontmatter and inline). */
  readonly tags: readonly string[];
  /** Frontmatter as JSON (null for attachments and notes without one). */
  readonly properties: Readonly<Record<string, unknown>> | null;
  readonly isNote: boolean;
  /** Its converted property values, kept by the query's lookup (see recordMemo); absent until first read. */
  memo?: PropertyMemo;
}

/** Converted property values kept with a record, valid while `key` is the lookup's (one per set of property types). */
export interface PropertyMemo {
  readonly key: object;
  readonly values: Map<string, Value>;
}

/** The record's converted values under `key`, started afresh when it has none or another key's. */
export function recordMemo(rec: FileRecord, key: object): Map<string, Value> {
  let m = rec.memo;
  if (m === undefined || m.key !== key) rec.memo = m = { key, values: new Map() };
  return m.values;
}

export class BDate {
  constructor(
    readonly ms: number,
    /** Whether the value carries a time of day (a datetime) or is a calendar date. */
    readonly hasTime: boolean,
  ) {}
}

export class BDuration {
  constructor(readonly ms: number) {}
}

export class BLink {
  constructor(
    /** The link target as written (`Note`, `Folder/Note.md`, `img.png`). */
    readonly target: string,
    readonly display: string | null,
    /** The path it resolves to from its source, when it resolves. */
    readonly resolved: string | null,
  ) {}
}

export class BFile {
  constructor(readonly rec: FileRecord) {}
}

export class BRegex {
  constructor(readonly re: RegExp) {}
}

export type Value =
  | null
  | boolean
  | number
  | string
  | BDate
  | BDuration
  | BLink
  | BFile
  | BRegex
  | Value[]
  | { readonly [key: string]: Value };

export type TypeName =
  | 'null'
  | 'boolean'
  | 'number'
  | 'string'
  | 'date'
  | 'duration'
  | 'link'
  | 'file'
  | 'regexp'
  | 'list'
  | 'object';

export function typeOf(v: Value): TypeName {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'string') return 'string';
  if (v instanceof BDate) return 'date';
  if (v instanceof BDuration) return 'duration';
  if (v instanceof BLink) return 'link';
  if (v instanceof BFile) return 'file';
  if (v instanceof BRegex) return 'regexp';
  if (Array.isArray(v)) return 'list';
  return 'object';
}

export function isObject(v: Value): v is { readonly [key: string]: Value } {
  return typeOf(v) === 'object';
}

export function truthy(v: Value): boolean {
  if (v === null || v === false || v === 0 || v === '' || Number.isNaN(v)) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (isObject(v)) return Object.keys(v).length > 0;
  return true;
}

export function isEmpty(v: Value): boolean {
  if (v === null || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isObject(v)) return Object.keys(v).length === 0;
  return false;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_DATETIME =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3})\d*)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * Parse a date as Obsidian writes them. Dates without a zone are read in UTC so the same vault gives the same
 * rows on every server (the query's clock and `today()` are UTC too).
 */
export function parseDate(s: string): BDate | null {
  const t = s.trim();
  let m = ISO_DATE.exec(t);
  if (m) {
    const ms = Date.UTC(+m[1], +m[2] - 1, +m[3]);
    return Number.isNaN(ms) ? null : new BDate(ms, false);
  }
  m = ISO_DATETIME.exec(t);
  if (m) {
    let ms = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +(m[6] ?? 0), +(m[7] ?? '0').padEnd(3, '0'));
    if (m[8] && m[8] !== 'Z') {
      const z = /([+-])(\d{2}):?(\d{2})/.exec(m[8])!;
      ms -= (z[1] === '-' ? -1 : 1) * (+z[2] * 60 + +z[3]) * 60_000;
    }
    return Number.isNaN(ms) ? null : new BDate(ms, true);
  }
  return null;
}

const UNIT_MS: Record<string, number> = {
  y: 365 * 86_400_000,
  year: 365 * 86_400_000,
  years: 365 * 86_400_000,
  M: 30 * 86_400_000,
  month: 30 * 86_400_000,
  months: 30 * 86_400_000,
  w: 7 * 86_400_000,
  week: 7 * 86_400_000,
  weeks: 7 * 86_400_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
  h: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  m: 60_000,
  minute: 60_000,
  minutes: 60_000,
  s: 1000,
  second: 1000,
  seconds: 1000,
  ms: 1,
};

/** Calendar units move by the calendar (a month from Jan 31 is the end of February), the rest by milliseconds. */
export interface DurationParts {
  readonly years: number;
  readonly months: number;
  readonly ms: number;
}

/** `"1 week"`, `"2d"`, `"-3 months"`, `"1y 2M 3d"`: a duration, or null when the string is not one. */
export function parseDurationParts(s: string): DurationParts | null {
  const re = /\s*([+-]?\d+(?:\.\d+)?)\s*([A-Za-z]+)\s*/gy;
  let years = 0;
  let months = 0;
  let ms = 0;
  let matched = false;
  let m: RegExpExecArray | null;
  let end = 0;
  while ((m = re.exec(s)) !== null) {
    const n = Number(m[1]);
    const unit = m[2] === 'M' ? 'M' : m[2].toLowerCase();
    if (!(unit in UNIT_MS)) return null;
    if (unit === 'y' || unit.startsWith('year')) years += n;
    else if (unit === 'M' || unit.startsWith('month')) months += n;
    else ms += n * UNIT_MS[unit];
    matched = true;
    end = re.lastIndex;
  }
  return matched && end === s.length ? { years, months, ms } : null;
}

export function addDuration(d: BDate, parts: DurationParts, sign: 1 | -1): BDate {
  const x = new Date(d.ms);
  if (parts.years || parts.months) {
    const day = x.getUTCDate();
    x.setUTCDate(1);
    x.setUTCMonth(x.getUTCMonth() + sign * (parts.years * 12 + parts.months));
    const last = new Date(Date.UTC(x.getUTCFullYear(), x.getUTCMonth() + 1, 0)).getUTCDate();
    x.setUTCDate(Math.min(day, last));
  }
  return new BDate(x.getTime() + sign * parts.ms, d.hasTime || parts.ms % 86_400_000 !== 0);
}

/** The date a value means, when it is one or a string holding one. */
export function asDate(v: Value): BDate | null {
  if (v instanceof BDate) return v;
  if (typeof v === 'string') return parseDate(v);
  return null;
}

/** What a link or file is identified by when compared: its resolved path, else its target lower-cased. */
function linkKey(v: BLink | BFile): string {
  if (v instanceof BFile) return v.rec.path;
  return v.resolved ?? v.target.toLowerCase();
}

export function equals(a: Value, b: Value): boolean {
  if (a === null || b === null) return a === b;
  if ((a instanceof BLink || a instanceof BFile) && (b instanceof BLink || b instanceof BFile))
    return linkKey(a) === linkKey(b);
  if (a instanceof BLink && typeof b === 'string') return linkMatchesText(a, b);
  if (b instanceof BLink && typeof a === 'string') return linkMatchesText(b, a);
  const da = a instanceof BDate ? a : null;
  const db = b instanceof BDate ? b : null;
  if (da || db) {
    const x = asDate(a);
    const y = asDate(b);
    return !!x && !!y && x.ms === y.ms;
  }
  if (a instanceof BDuration || b instanceof BDuration) return numeric(a) === numeric(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => equals(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && equals(a[k], b[k]));
  }
  if (a instanceof BRegex || b instanceof BRegex) return false;
  return a === b;
}

function linkMatchesText(l: BLink, s: string): boolean {
  const t = s
    .replace(/^\[\[|\]\]$/g, '')
    .trim()
    .toLowerCase();
  return (
    l.target.toLowerCase() === t ||
    (l.resolved !== null && l.resolved.toLowerCase().replace(/\.md$/, '') === t.replace(/\.md$/, ''))
  );
}

function numeric(v: Value): number | null {
  if (typeof v === 'number') return v;
  if (v instanceof BDuration) return v.ms;
  if (v instanceof BDate) return v.ms;
  if (typeof v === 'boolean') return v ? 1 : 0;
  return null;
}

/** Ordering for `<` and sorts: a negative, zero or positive number, or null when the two do not compare. */
export function compare(a: Value, b: Value): number | null {
  if (a === null || b === null) return null;
  if (a instanceof BDate || b instanceof BDate) {
    const x = asDate(a);
    const y = asDate(b);
    return x && y ? x.ms - y.ms : null;
  }
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (a instanceof BLink || a instanceof BFile || b instanceof BLink || b instanceof BFile) {
    const x = display(a);
    const y = display(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  const x = numeric(a);
  const y = numeric(b);
  if (x !== null && y !== null) return x - y;
  return null;
}

/** How a sort orders any two values: nulls last, then by type, then within the type. */
export function sortCompare(a: Value, b: Value): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  const c = compare(a, b);
  if (c !== null) return c;
  if (Array.isArray(a) && Array.isArray(b)) return sortCompare(a[0] ?? null, b[0] ?? null);
  const ta = typeOf(a);
  const tb = typeOf(b);
  return ta < tb ? -1 : ta > tb ? 1 : 0;
}

function pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

export function formatDate(d: BDate): string {
  const x = new Date(d.ms);
  const day = `${x.getUTCFullYear()}-${pad(x.getUTCMonth() + 1)}-${pad(x.getUTCDate())}`;
  return d.hasTime ? `${day}T${pad(x.getUTCHours())}:${pad(x.getUTCMinutes())}:${pad(x.getUTCSeconds())}Z` : day;
}

export function formatDuration(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  const parts: string[] = [];
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    const n = Math.floor(rest / size);
    if (n) parts.push(`${n}${unit}`);
    rest -= n * size;
  }
  if (rest || parts.length === 0) parts.push(`${rest}ms`);
  return sign + parts.join(' ');
}

/** The text a value shows as (join, toString, string concatenation). */
export function display(v: Value): string {
  if (v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Math.round(v * 1e10) / 1e10);
  if (typeof v === 'boolean') return String(v);
  if (v instanceof BDate) return formatDate(v);
  if (v instanceof BDuration) return formatDuration(v.ms);
  if (v instanceof BLink) return v.display ?? v.target;
  if (v instanceof BFile) return v.rec.path;
  if (v instanceof BRegex) return String(v.re);
  if (Array.isArray(v)) return v.map(display).join(', ');
  return JSON.stringify(cellValue(v));
}

export type CellType = TypeName | 'error';

/** A value as it goes out in a result: its type and a JSON form (dates ISO, links with their path). */
export interface Cell {
  readonly type: CellType;
  readonly value: unknown;
}

/** Set an own property, even one named `__proto__` (a key from a note or an expression must never reach a prototype). */
export function setOwn<T>(o: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

export function cellValue(v: Value): unknown {
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (v instanceof BDate) return formatDate(v);
  if (v instanceof BDuration) return v.ms;
  if (v instanceof BLink) return { target: v.target, path: v.resolved, display: v.display };
  if (v instanceof BFile) return v.rec.path;
  if (v instanceof BRegex) return String(v.re);
  if (Array.isArray(v)) return v.map(cellValue);
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) setOwn(out, k, cellValue(x));
  return out;
}

export function toCell(v: Value): Cell {
  const t = typeOf(v);
  return { type: t === 'date' && !(v as BDate).hasTime ? 'date' : t, value: cellValue(v) };
}
