// Methods of objects (`keys`, `values`) and of regular expressions (`matches`, its work bounded by the text's length).
import { argValue, step } from '../runtime.js';
import { type BRegex, display, type Value } from '../values.js';
import type { Method, MethodTable } from './types.js';

export const OBJECT_METHODS: MethodTable<{ readonly [key: string]: Value }> = new Map<
  string,
  Method<{ readonly [key: string]: Value }>
>([
  ['keys', (o) => Object.keys(o)],
  ['values', (o) => Object.values(o)],
]);

export const REGEX_METHODS: MethodTable<BRegex> = new Map<string, Method<BRegex>>([
  [
    'matches',
    (self, a, row, ctx, l) => {
      const s = display(argValue(a, 0, row, ctx, l));
      step(ctx, Math.ceil(s.length / 64));
      self.re.lastIndex = 0;
      return self.re.test(s);
    },
  ],
]);
