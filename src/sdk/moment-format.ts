// Moment.js-style date formatting, the tokens notes and bases write (`YYYY-MM-DD`, `dddd, MMMM Do YYYY`,
// `gggg-[W]ww`, `HH:mm`): one formatter for every family. `[text]` is literal; any other letter passes through
// as written. Pure: the caller says whether the date reads in the server's local time or in UTC.

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
const DAY_MS = 86_400_000;
const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** A calendar date and a time of day, already read in the caller's zone. */
interface Fields {
  readonly year: number;
  readonly month: number;
  readonly date: number;
  readonly day: number;
  readonly hours: number;
  readonly minutes: number;
  readonly seconds: number;
}

/** Days since the epoch of a calendar date (zone-free arithmetic on the date's own fields). */
const dayNumber = (year: number, month: number, date: number): number => Date.UTC(year, month, date) / DAY_MS;

/** ISO week and week-year: weeks start Monday; week 1 holds January 4. */
function isoWeek(f: Fields): { week: number; year: number } {
  const n = dayNumber(f.year, f.month, f.date);
  const thursday = n - ((f.day + 6) % 7) + 3;
  const year = new Date(thursday * DAY_MS).getUTCFullYear();
  return { week: 1 + Math.floor((thursday - dayNumber(year, 0, 1)) / 7), year };
}

/** moment's default (en) locale week: weeks start Sunday; week 1 holds January 1. */
function localeWeek(f: Fields): { week: number; year: number } {
  const sunday = dayNumber(f.year, f.month, f.date) - f.day;
  const saturday = new Date((sunday + 6) * DAY_MS).getUTCFullYear();
  const year = Math.max(saturday, new Date(sunday * DAY_MS).getUTCFullYear());
  const jan1 = dayNumber(year, 0, 1);
  const week1 = jan1 - new Date(jan1 * DAY_MS).getUTCDay();
  return { week: 1 + Math.round((sunday - week1) / 7), year };
}

function ordinal(n: number): string {
  const tens = n % 100;
  const s = tens >= 11 && tens <= 13 ? 'th' : n % 10 === 1 ? 'st' : n % 10 === 2 ? 'nd' : n % 10 === 3 ? 'rd' : 'th';
  return `${n}${s}`;
}

// Longest first where one token begins another (Do before D, DDDD before DD).
const TOKENS =
  /\[([^\]]*)]|YYYY|YY|gggg|GGGG|MMMM|MMM|MM|M|DDDD|DDD|Do|DD|D|dddd|ddd|d|ww|w|WW|W|Q|HH|H|hh|h|mm|m|ss|s|A|a/g;

function token(tok: string, f: Fields): string {
  const h12 = f.hours % 12 === 0 ? 12 : f.hours % 12;
  const dayOfYear = () => 1 + dayNumber(f.year, f.month, f.date) - dayNumber(f.year, 0, 1);
  switch (tok) {
    case 'YYYY':
      return String(f.year);
    case 'YY':
      return pad(f.year % 100);
    case 'gggg':
      return String(localeWeek(f).year);
    case 'GGGG':
      return String(isoWeek(f).year);
    case 'MMMM':
      return MONTHS[f.month]!;
    case 'MMM':
      return MONTHS[f.month]!.slice(0, 3);
    case 'MM':
      return pad(f.month + 1);
    case 'M':
      return String(f.month + 1);
    case 'DDDD':
      return pad(dayOfYear(), 3);
    case 'DDD':
      return String(dayOfYear());
    case 'Do':
      return ordinal(f.date);
    case 'DD':
      return pad(f.date);
    case 'D':
      return String(f.date);
    case 'dddd':
      return DAYS[f.day]!;
    case 'ddd':
      return DAYS[f.day]!.slice(0, 3);
    case 'd':
      return String(f.day);
    case 'ww':
      return pad(localeWeek(f).week);
    case 'w':
      return String(localeWeek(f).week);
    case 'WW':
      return pad(isoWeek(f).week);
    case 'W':
      return String(isoWeek(f).week);
    case 'Q':
      return String(Math.floor(f.month / 3) + 1);
    case 'HH':
      return pad(f.hours);
    case 'H':
      return String(f.hours);
    case 'hh':
      return pad(h12);
    case 'h':
      return String(h12);
    case 'mm':
      return pad(f.minutes);
    case 'm':
      return String(f.minutes);
    case 'ss':
      return pad(f.seconds);
    case 's':
      return String(f.seconds);
    case 'A':
      return f.hours < 12 ? 'AM' : 'PM';
    default:
      return f.hours < 12 ? 'am' : 'pm';
  }
}

/** `date` formatted with Moment.js tokens, read in the server's local time (`local`) or in UTC. */
export function formatMoment(date: Date, format: string, zone: 'local' | 'utc' = 'local'): string {
  const utc = zone === 'utc';
  const f: Fields = {
    year: utc ? date.getUTCFullYear() : date.getFullYear(),
    month: utc ? date.getUTCMonth() : date.getMonth(),
    date: utc ? date.getUTCDate() : date.getDate(),
    day: utc ? date.getUTCDay() : date.getDay(),
    hours: utc ? date.getUTCHours() : date.getHours(),
    minutes: utc ? date.getUTCMinutes() : date.getMinutes(),
    seconds: utc ? date.getUTCSeconds() : date.getSeconds(),
  };
  return format.replace(TOKENS, (tok, literal: string | undefined) =>
    literal !== undefined ? literal : token(tok, f),
  );
}
