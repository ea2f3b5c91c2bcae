// Methods of strings (`contains`, `replace`, `split`…); date methods on a string that holds a date. Pure; the
// work of a long string counts against the budget and results are bounded in size.
import { argValue, boundedString, EvalError, needNumber, step } from '../runtime.js';
import { BRegex, display, parseDate } from '../values.js';
import { DATE_METHODS } from './date.js';
import type { Method, MethodTable } from './types.js';

/** A date method called on a string: the string read as a date, else no such method. */
function viaDate(name: string): Method<string> {
  return (self, a, row, ctx, locals) => {
    const d = parseDate(self);
    if (!d) throw new EvalError(`a string has no method ${name}()`);
    return DATE_METHODS.get(name)!(d, a, row, ctx, locals);
  };
}

export const STRING_METHODS: MethodTable<string> = new Map<string, Method<string>>([
  ['contains', (s, a, row, ctx, l) => s.includes(display(argValue(a, 0, row, ctx, l)))],
  ['containsAll', (s, a, row, ctx, l) => a.every((ev) => s.includes(display(ev(row, ctx, l))))],
  ['containsAny', (s, a, row, ctx, l) => a.some((ev) => s.includes(display(ev(row, ctx, l))))],
  ['startsWith', (s, a, row, ctx, l) => s.startsWith(display(argValue(a, 0, row, ctx, l)))],
  ['endsWith', (s, a, row, ctx, l) => s.endsWith(display(argValue(a, 0, row, ctx, l)))],
  ['lower', (s) => s.toLowerCase()],
  ['upper', (s) => s.toUpperCase()],
  ['title', (s) => s.replace(/(^|\s)(\p{L})/gu, (_, x: string, y: string) => x + y.toUpperCase())],
  ['trim', (s) => s.trim()],
  [
    'replace',
    (s, a, row, ctx, l) => {
      const p = argValue(a, 0, row, ctx, l);
      const with_ = display(argValue(a, 1, row, ctx, l));
      step(ctx, Math.ceil(s.length / 64));
      const out = p instanceof BRegex ? s.replace(p.re, () => with_) : s.split(display(p)).join(with_);
      return boundedString(ctx, out);
    },
  ],
  [
    'repeat',
    (s, a, row, ctx, l) => {
      const n = needNumber(argValue(a, 0, row, ctx, l), 'repeat()');
      if (n < 0 || !Number.isInteger(n)) throw new EvalError('repeat() needs a whole number ≥ 0');
      if (s.length * n > ctx.budget.maxStringChars) boundedString(ctx, 'x'.repeat(ctx.budget.maxStringChars + 1));
      return s.repeat(n);
    },
  ],
  ['reverse', (s) => [...s].reverse().join('')],
  [
    'slice',
    (s, a, row, ctx, l) =>
      s.slice(
        needNumber(argValue(a, 0, row, ctx, l), 'slice()', 0),
        a.length > 1 ? needNumber(argValue(a, 1, row, ctx, l), 'slice()') : undefined,
      ),
  ],
  [
    'split',
    (s, a, row, ctx, l) => {
      const p = argValue(a, 0, row, ctx, l);
      const n = a.length > 1 ? needNumber(argValue(a, 1, row, ctx, l), 'split()') : undefined;
      step(ctx, Math.ceil(s.length / 64));
      return p instanceof BRegex ? s.split(p.re, n) : s.split(display(p), n);
    },
  ],
  ['format', viaDate('format')],
  ['date', viaDate('date')],
  ['time', viaDate('time')],
  ['relative', viaDate('relative')],
]);
