// Methods of numbers (`abs`, `round`, `toFixed`…). Pure.
import { argValue, needNumber } from '../runtime.js';
import type { Method, MethodTable } from './types.js';

export const NUMBER_METHODS: MethodTable<number> = new Map<string, Method<number>>([
  ['abs', (n) => Math.abs(n)],
  ['ceil', (n) => Math.ceil(n)],
  ['floor', (n) => Math.floor(n)],
  [
    'round',
    (n, a, row, ctx, l) => {
      const digits = needNumber(argValue(a, 0, row, ctx, l), 'round()', 0);
      const f = 10 ** Math.max(0, Math.min(15, Math.trunc(digits)));
      return Math.round(n * f) / f;
    },
  ],
  [
    'toFixed',
    (n, a, row, ctx, l) =>
      n.toFixed(Math.max(0, Math.min(20, Math.trunc(needNumber(argValue(a, 0, row, ctx, l), 'toFixed()', 0))))),
  ],
]);
