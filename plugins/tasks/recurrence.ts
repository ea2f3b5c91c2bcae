// Recurrence rules of the Tasks plugin (`🔁 every …`): parse the rule text and compute the next occurrence's
// dates the way the plugin does (rrule semantics, month/year ends clamped). Pure; no I/O, no clock.

/** A parsed rule. `months`/`monthDays`/`nthWeekdays`/`weekdays` narrow the candidate days (rrule BYxxx). */
export interface RecurrenceRule {
  freq: 'day' | 'week' | 'month' | 'year';
  interval: number;
  /** 0 = Monday … 6 = Sunday. */
  weekdays: number[];
  /** 1 … 31, or -1 for the last day of the month. */
  monthDays: number[];
  /** [n, weekday]: n = 1…5 or -1 (last). */
  nthWeekdays: Array<[number, number]>;
  /** 1 … 12. */
  months: number[];
  whenDone: boolean;
}

export interface OccurrenceDates {
  due: string | null;
  scheduled: string | null;
  start: string | null;
}

const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
const ORDINAL_WORDS: Record<string, number> = { first: 1, second: 2, third: 3, fourth: 4, fifth: 5, last: -1 };

function weekdayOf(word: string): number {
  const w = word.toLowerCase();
  return WEEKDAYS.findIndex((d) => d === w || `${d}s` === w || (w.length === 3 && d.startsWith(w)));
}

function monthOf(word: string): number {
  const w = word.toLowerCase();
  const i = w.length >= 3 ? MONTHS.findIndex((m) => m === w || (w.length === 3 && m.startsWith(w))) : -1;
  return i < 0 ? -1 : i + 1;
}

function ordinalOf(word: string): number | null {
  const w = word.toLowerCase();
  if (w in ORDINAL_WORDS) return ORDINAL_WORDS[w];
  const m = /^(\d{1,2})(st|nd|rd|th)?$/.exec(w);
  return m ? Number(m[1]) : null;
}

function listWords(text: string): string[] {
  return text
    .split(/\s*(?:,|\band\b)\s*/i)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Parse `on the 1st and 15th` / `on the last` / `on the 2nd Tuesday` / `on Monday, Friday` into the rule. */
function parseOn(on: string, rule: RecurrenceRule): boolean {
  const body = on.replace(/^the\s+/i, '');
  for (const item of listWords(body)) {
    const words = item.replace(/^the\s+/i, '').split(/\s+/);
    if (words.length === 1) {
      const wd = weekdayOf(words[0]);
      if (wd >= 0) {
        rule.weekdays.push(wd);
        continue;
      }
      const n = ordinalOf(words[0]);
      if (n === null || n === 0 || n > 31) return false;
      rule.monthDays.push(n);
    } else if (words.length === 2) {
      const n = ordinalOf(words[0]);
      const wd = weekdayOf(words[1]);
      if (n === null || wd < 0 || n === 0 || n > 5) return false;
      rule.nthWeekdays.push([n, wd]);
    } else return false;
  }
  // rrule intersects day-of-month and weekday filters; mixing them in one rule is not something we guess at
  const kinds = [rule.weekdays.length > 0, rule.monthDays.length > 0, rule.nthWeekdays.length > 0].filter(
    Boolean,
  ).length;
  return kinds === 1;
}

/** The rule a `🔁` text states, or null when it is not one this parser understands. */
export function parseRecurrence(text: string): RecurrenceRule | null {
  let t = text.trim().replace(/\s+/g, ' ').toLowerCase();
  const rule: RecurrenceRule = {
    freq: 'day',
    interval: 1,
    weekdays: [],
    monthDays: [],
    nthWeekdays: [],
    months: [],
    whenDone: false,
  };
  if (/ when done$/.test(t)) {
    rule.whenDone = true;
    t = t.slice(0, -' when done'.length);
  }
  const m = /^every (?:(\d{1,4}) )?([a-z]+)(?: (.*))?$/.exec(t);
  if (!m) return null;
  const [, n, unit, tail = ''] = m;
  if (n !== undefined) rule.interval = Number(n);
  if (rule.interval < 1) return null;
  const unitKey = unit.replace(/s$/, '');
  if (unitKey === 'day' || unitKey === 'week' || unitKey === 'month' || unitKey === 'year') {
    rule.freq = unitKey;
    if (tail === '') return rule;
    const on = /^on (.+)$/.exec(tail);
    if (!on || rule.freq === 'day' || rule.freq === 'year') return null;
    if (!parseOn(on[1], rule)) return null;
    if (rule.freq === 'week' && rule.weekdays.length === 0) return null;
    if (rule.freq === 'month' && rule.weekdays.length > 0) return null;
    return rule;
  }
  if (n !== undefined) return null;
  if (unit === 'weekday' && tail === '') {
    rule.freq = 'week';
    rule.weekdays = [0, 1, 2, 3, 4];
    return rule;
  }
  // `every Monday[, Thursday and Friday]` (weekly) or `every January[ and July][ on the 1st]` (yearly)
  const onAt = ` ${tail}`.search(/ on /);
  const names = listWords(`${unit}${onAt >= 0 ? ` ${tail}`.slice(0, onAt) : ` ${tail}`}`);
  const on = onAt >= 0 ? ` ${tail}`.slice(onAt + 4) : null;
  if (names.every((w) => weekdayOf(w) >= 0) && on === null) {
    rule.freq = 'week';
    rule.weekdays = names.map(weekdayOf);
    return rule;
  }
  if (names.every((w) => monthOf(w) > 0)) {
    rule.freq = 'year';
    rule.months = names.map(monthOf);
    if (on !== null && (!parseOn(on, rule) || rule.weekdays.length > 0)) return null;
    return rule;
  }
  return null;
}

// --- calendar arithmetic on whole UTC days ------------------------------------------------------

const DAY_MS = 86_400_000;
export const toDay = (iso: string): number => Math.floor(Date.parse(`${iso}T00:00:00Z`) / DAY_MS);
export const fromDay = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);

function parts(day: number): { y: number; m: number; d: number; wd: number; last: number } {
  const dt = new Date(day * DAY_MS);
  const y = dt.getUTCFullYear();
  const m = dt.getUTCMonth() + 1;
  return { y, m, d: dt.getUTCDate(), wd: (dt.getUTCDay() + 6) % 7, last: new Date(Date.UTC(y, m, 0)).getUTCDate() };
}

/** Add whole months, clamping to the month's last day (Jan 31 + 1 month = Feb 28/29), as the Tasks plugin does. */
function addMonths(day: number, months: number): number {
  const p = parts(day);
  const idx = p.y * 12 + (p.m - 1) + months;
  const y = Math.floor(idx / 12);
  const m = idx % 12;
  const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  return Math.floor(Date.UTC(y, m, Math.min(p.d, last)) / DAY_MS);
}

function matchesDay(rule: RecurrenceRule, start: number, day: number): boolean {
  const s = parts(start);
  const p = parts(day);
  if (rule.freq === 'week') {
    const weeks = Math.floor((day - p.wd - (start - s.wd)) / 7);
    return weeks % rule.interval === 0 && rule.weekdays.includes(p.wd);
  }
  const periods = rule.freq === 'month' ? (p.y - s.y) * 12 + (p.m - s.m) : p.y - s.y;
  if (periods % rule.interval !== 0) return false;
  if (rule.months.length > 0 && !rule.months.includes(p.m)) return false;
  if (rule.monthDays.length > 0) return rule.monthDays.some((n) => n === p.d || (n < 0 && p.d === p.last + 1 + n));
  if (rule.nthWeekdays.length > 0) {
    return rule.nthWeekdays.some(([n, wd]) => wd === p.wd && (n > 0 ? Math.ceil(p.d / 7) === n : p.d > p.last - 7));
  }
  return p.d === s.d; // yearly by month names without days: the start's day of month (rrule's default)
}

/** First day after `start` that the rule, anchored at `start`, produces. */
export function nextAfter(rule: RecurrenceRule, start: number): number | null {
  const filtered = rule.weekdays.length + rule.monthDays.length + rule.nthWeekdays.length + rule.months.length > 0;
  if (!filtered) {
    if (rule.freq === 'day') return start + rule.interval;
    if (rule.freq === 'week') return start + 7 * rule.interval;
    return addMonths(start, rule.freq === 'month' ? rule.interval : 12 * rule.interval);
  }
  const horizon = 366 * 8 * rule.interval; // covers Feb 29 yearly rules and every sparse monthly rule
  for (let day = start + 1; day <= start + horizon; day++) if (matchesDay(rule, start, day)) return day;
  return null;
}

/**
 * The next occurrence's dates: the reference date (due, else scheduled, else start) moves to the rule's next
 * day after it (after today for `when done`), and the other dates keep their distance to it. A task without
 * dates recurs without dates. `removeScheduled` drops the scheduled date when a due date exists (plugin option).
 */
export function nextOccurrence(
  rule: RecurrenceRule,
  dates: OccurrenceDates,
  today: string,
  removeScheduled = false,
): OccurrenceDates | null {
  const refIso = dates.due ?? dates.scheduled ?? dates.start;
  if (refIso === null) return { due: null, scheduled: null, start: null };
  const ref = toDay(refIso);
  const next = nextAfter(rule, rule.whenDone ? toDay(today) : ref);
  if (next === null) return null;
  const shift = (iso: string | null): string | null => (iso === null ? null : fromDay(next + (toDay(iso) - ref)));
  return {
    due: shift(dates.due),
    scheduled: removeScheduled && dates.due !== null ? null : shift(dates.scheduled),
    start: shift(dates.start),
  };
}
