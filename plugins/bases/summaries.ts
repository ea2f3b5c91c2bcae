// A view's summaries: the built-in ones Obsidian offers (Average … Unique) over one column's values, and custom
// summary formulas, which see the values as `values`. Pure; one pass over the values for each built-in one.
import type { Compiled } from './expr/compile.js';
import { type EvalContext, EvalError, newRow } from './expr/runtime.js';
import { BDate, BDuration, display, type FileRecord, isEmpty, type Value } from './expr/values.js';

export const BUILTIN_SUMMARIES = [
  'Average',
  'Sum',
  'Min',
  'Max',
  'Range',
  'Median',
  'Stddev',
  'Earliest',
  'Latest',
  'Checked',
  'Unchecked',
  'Empty',
  'Filled',
  'Unique',
  'Count',
] as const;

const NO_FILE: FileRecord = {
  path: '',
  size: 0,
  mtimeMs: 0,
  ctimeMs: null,
  tags: [],
  properties: null,
  isNote: false,
};

/** Numbers (durations by their length) among the values. */
function numbersOf(values: readonly Value[]): number[] {
  const out: number[] = [];
  for (const v of values) {
    if (typeof v === 'number') out.push(v);
    else if (v instanceof BDuration) out.push(v.ms);
  }
  return out;
}

function datesOf(values: readonly Value[]): BDate[] {
  const out: BDate[] = [];
  for (const v of values) if (v instanceof BDate) out.push(v);
  return out;
}

function count(values: readonly Value[], holds: (v: Value) => boolean): number {
  let n = 0;
  for (const v of values) if (holds(v)) n++;
  return n;
}

/** The extreme number by `wins` (NaN wins, as Math.min/max give it); the list is not empty. */
function extremeNumber(nums: readonly number[], wins: (x: number, best: number) => boolean): number {
  let best = nums[0];
  for (let i = 1; i < nums.length; i++) if (Number.isNaN(nums[i]) || wins(nums[i], best)) best = nums[i];
  return best;
}

/** The earliest (or latest) date: the first of equal ones. */
function extremeDate(dates: readonly BDate[], wins: (x: number, best: number) => boolean): BDate {
  let best = dates[0];
  for (let i = 1; i < dates.length; i++) if (wins(dates[i].ms, best.ms)) best = dates[i];
  return best;
}

const less = (x: number, best: number) => x < best;
const more = (x: number, best: number) => x > best;

/** One summary of one column's values (a custom one by its compiled formula). */
export function summarise(
  summary: string,
  values: readonly Value[],
  custom: ReadonlyMap<string, Compiled>,
  ctx: EvalContext,
): Value {
  switch (summary) {
    case 'Average':
    case 'Sum': {
      const nums = numbersOf(values);
      if (!nums.length) return null;
      let sum = 0;
      for (const x of nums) sum += x;
      return summary === 'Sum' ? sum : sum / nums.length;
    }
    case 'Min':
    case 'Max': {
      const wins = summary === 'Min' ? less : more;
      const nums = numbersOf(values);
      if (nums.length) return extremeNumber(nums, wins);
      const dates = datesOf(values);
      return dates.length ? extremeDate(dates, wins) : null;
    }
    case 'Range': {
      const nums = numbersOf(values);
      if (nums.length) return extremeNumber(nums, more) - extremeNumber(nums, less);
      const dates = datesOf(values);
      if (dates.length) return new BDuration(extremeDate(dates, more).ms - extremeDate(dates, less).ms);
      return null;
    }
    case 'Median': {
      const nums = numbersOf(values);
      if (!nums.length) return null;
      const s = Float64Array.from(nums).sort();
      const m = s.length >> 1;
      return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
    }
    case 'Stddev': {
      const nums = numbersOf(values);
      if (!nums.length) return null;
      let sum = 0;
      for (const x of nums) sum += x;
      const mean = sum / nums.length;
      let sq = 0;
      for (const x of nums) sq += (x - mean) ** 2;
      return Math.sqrt(sq / nums.length);
    }
    case 'Earliest':
    case 'Latest': {
      const dates = datesOf(values);
      return dates.length ? extremeDate(dates, summary === 'Earliest' ? less : more) : null;
    }
    case 'Checked':
      return count(values, (v) => v === true);
    case 'Unchecked':
      return count(values, (v) => v === false);
    case 'Empty':
      return count(values, isEmpty);
    case 'Filled':
      return count(values, (v) => !isEmpty(v));
    case 'Count':
      return values.length;
    case 'Unique': {
      // Values are the same when their type and shown text are (numbers as shown, to 10 decimals).
      const strings = new Set<string>();
      const numbers = new Set<number>();
      const others = new Set<string>();
      for (const v of values) {
        if (isEmpty(v)) continue;
        if (typeof v === 'string') strings.add(v);
        else if (typeof v === 'number') numbers.add(Number.isInteger(v) ? v : Math.round(v * 1e10) / 1e10);
        else others.add(`${typeof v}:${display(v)}`);
      }
      return strings.size + numbers.size + others.size;
    }
    default: {
      const c = custom.get(summary)!;
      try {
        // A custom summary sees the column's values as `values`, outside any row.
        return c.ev(newRow(ctx.thisRec ?? NO_FILE), ctx, { values: values as Value[] });
      } catch (e) {
        if (e instanceof EvalError) return `error: ${e.message}`;
        throw e;
      }
    }
  }
}
