// Methods of lists, lambdas included (`filter`, `map`, `reduce` see `value`, `index`, `acc`). Pure; work that grows
// with a list's length counts against the budget.
import { argValue, boundedString, EvalError, needNumber, step } from '../runtime.js';
import { display, equals, sortCompare, truthy, type Value } from '../values.js';
import type { Method, MethodTable } from './types.js';

export function containsValue(hay: Value, needle: Value): boolean {
  if (typeof hay === 'string') return hay.includes(display(needle));
  if (Array.isArray(hay)) return hay.some((x) => equals(x, needle));
  return false;
}

const lambda = (name: 'filter' | 'map'): Method<Value[]> => {
  return (self, a, row, ctx, locals) => {
    const body = a[0];
    if (!body) throw new EvalError(`${name}() needs an expression`);
    const out: Value[] = [];
    self.forEach((value, index) => {
      const v = body(row, ctx, { ...locals, value, index });
      if (name === 'map') out.push(v);
      else if (truthy(v)) out.push(value);
    });
    return out;
  };
};

const aggregate = (name: string): Method<Value[]> => {
  return (self) => numericAggregate(name, self);
};

export const LIST_METHODS: MethodTable<Value[]> = new Map<string, Method<Value[]>>([
  ['contains', (s, a, row, ctx, l) => containsValue(s, argValue(a, 0, row, ctx, l))],
  [
    'containsAll',
    (s, a, row, ctx, l) => {
      step(ctx, s.length * a.length);
      return a.every((ev) => containsValue(s, ev(row, ctx, l)));
    },
  ],
  [
    'containsAny',
    (s, a, row, ctx, l) => {
      step(ctx, s.length * a.length);
      return a.some((ev) => containsValue(s, ev(row, ctx, l)));
    },
  ],
  ['filter', lambda('filter')],
  ['map', lambda('map')],
  [
    'reduce',
    (s, a, row, ctx, locals) => {
      const body = a[0];
      if (!body) throw new EvalError('reduce() needs an expression');
      let acc = a.length > 1 ? a[1](row, ctx, locals) : null;
      s.forEach((value, index) => {
        acc = body(row, ctx, { ...locals, value, index, acc });
      });
      return acc;
    },
  ],
  [
    'flat',
    (s, _a, _row, ctx) => {
      step(ctx, s.length);
      return s.flat() as Value[];
    },
  ],
  [
    'join',
    (s, a, row, ctx, l) => {
      step(ctx, s.length);
      return boundedString(ctx, s.map(display).join(a.length ? display(argValue(a, 0, row, ctx, l)) : ','));
    },
  ],
  ['reverse', (s) => [...s].reverse()],
  [
    'slice',
    (s, a, row, ctx, l) =>
      s.slice(
        needNumber(argValue(a, 0, row, ctx, l), 'slice()', 0),
        a.length > 1 ? needNumber(argValue(a, 1, row, ctx, l), 'slice()') : undefined,
      ),
  ],
  [
    'sort',
    (s, _a, _row, ctx) => {
      step(ctx, s.length * Math.ceil(Math.log2(s.length + 1)));
      return [...s].sort(sortCompare);
    },
  ],
  [
    'unique',
    (s, _a, _row, ctx) => {
      step(ctx, s.length * s.length);
      const out: Value[] = [];
      for (const x of s) if (!out.some((y) => equals(x, y))) out.push(x);
      return out;
    },
  ],
  ['mean', aggregate('mean')],
  ['median', aggregate('median')],
  ['sum', aggregate('sum')],
  ['min', aggregate('min')],
  ['max', aggregate('max')],
]);

function numericAggregate(name: string, list: readonly Value[]): Value {
  const nums = list.filter((x): x is number => typeof x === 'number');
  if (nums.length === 0) return null;
  switch (name) {
    case 'sum':
      return nums.reduce((a, b) => a + b, 0);
    case 'mean':
      return nums.reduce((a, b) => a + b, 0) / nums.length;
    case 'min':
      return nums.reduce((a, b) => Math.min(a, b));
    case 'max':
      return nums.reduce((a, b) => Math.max(a, b));
    default: {
      const s = [...nums].sort((a, b) => a - b);
      const m = s.length >> 1;
      return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
    }
  }
}
