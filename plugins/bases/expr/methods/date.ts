// Methods of dates (`date`, `time`, `format` with the Moment.js tokens users write most, `relative`). Pure: dates are
// UTC, "now" comes from the context.
import { argValue, DAY, needString } from '../runtime.js';
import { BDate } from '../values.js';
import type { Method, MethodTable } from './types.js';

export const DATE_METHODS: MethodTable<BDate> = new Map<string, Method<BDate>>([
  ['date', (d) => new BDate(d.ms - (((d.ms % DAY) + DAY) % DAY), false)],
  [
    'time',
    (d) => {
      const x = new Date(d.ms);
      return [x.getUTCHours(), x.getUTCMinutes(), x.getUTCSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
    },
  ],
  ['format', (d, a, row, ctx, l) => formatMoment(d, needString(argValue(a, 0, row, ctx, l), 'format()'))],
  ['relative', (d, _a, _row, ctx) => relative(d.ms - ctx.nowMs)],
]);

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
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** The Moment.js tokens Obsidian's format() users write most; other letters pass through as written. */
function formatMoment(d: BDate, fmt: string): string {
  const x = new Date(d.ms);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const tokens: Record<string, () => string> = {
    YYYY: () => String(x.getUTCFullYear()),
    YY: () => p(x.getUTCFullYear() % 100),
    MMMM: () => MONTHS[x.getUTCMonth()],
    MMM: () => MONTHS[x.getUTCMonth()].slice(0, 3),
    MM: () => p(x.getUTCMonth() + 1),
    M: () => String(x.getUTCMonth() + 1),
    DD: () => p(x.getUTCDate()),
    D: () => String(x.getUTCDate()),
    dddd: () => WEEKDAYS[x.getUTCDay()],
    ddd: () => WEEKDAYS[x.getUTCDay()].slice(0, 3),
    HH: () => p(x.getUTCHours()),
    H: () => String(x.getUTCHours()),
    mm: () => p(x.getUTCMinutes()),
    ss: () => p(x.getUTCSeconds()),
  };
  return fmt.replace(/\[([^\]]*)\]|YYYY|YY|MMMM|MMM|MM|M|DD|D|dddd|ddd|HH|H|mm|ss/g, (m, lit: string | undefined) =>
    lit !== undefined ? lit : tokens[m](),
  );
}

function relative(deltaMs: number): string {
  const abs = Math.abs(deltaMs);
  const units: [string, number][] = [
    ['year', 365 * DAY],
    ['month', 30 * DAY],
    ['day', DAY],
    ['hour', 3_600_000],
    ['minute', 60_000],
  ];
  for (const [u, size] of units) {
    const n = Math.floor(abs / size);
    if (n >= 1) {
      const s = `${n} ${u}${n > 1 ? 's' : ''}`;
      return deltaMs < 0 ? `${s} ago` : `in ${s}`;
    }
  }
  return 'just now';
}
