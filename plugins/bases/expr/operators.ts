// The operators of the Bases expression language over two values (or one): comparison, date and duration
// arithmetic, string and list concatenation, negation. Pure; `&&` and `||` short-circuit in the compiler.
import type { BinOp } from './parser.js';
import { boundedString, type EvalContext, EvalError, step } from './runtime.js';
import {
  addDuration,
  asDate,
  BDate,
  BDuration,
  compare,
  display,
  equals,
  parseDate,
  parseDurationParts,
  truthy,
  typeOf,
  type Value,
} from './values.js';

export type Operator = (l: Value, r: Value, ctx: EvalContext) => Value;

/** The operator for `op` (both operands evaluated), picked once when the expression is compiled. */
export function operator(op: Exclude<BinOp, '&&' | '||'>): Operator {
  switch (op) {
    case '==':
      return (l, r) => equals(l, r);
    case '!=':
      return (l, r) => !equals(l, r);
    case '<':
      return (l, r) => ordered(l, r, (c) => c < 0);
    case '<=':
      return (l, r) => ordered(l, r, (c) => c <= 0);
    case '>':
      return (l, r) => ordered(l, r, (c) => c > 0);
    case '>=':
      return (l, r) => ordered(l, r, (c) => c >= 0);
    case '+':
    case '-':
      return (l, r, ctx) => additive(op, l, r, ctx);
    case '*':
    case '/':
    case '%':
      return (l, r) => multiplicative(op, l, r);
  }
}

function ordered(l: Value, r: Value, holds: (c: number) => boolean): boolean {
  // The common case first: two numbers compare as numbers (as compare() does).
  if (typeof l === 'number' && typeof r === 'number') return holds(l - r);
  const c = compare(l, r);
  return c !== null && holds(c);
}

function additive(op: '+' | '-', l: Value, r: Value, ctx: EvalContext): Value {
  if (l instanceof BDate) {
    if (op === '-' && (r instanceof BDate || (typeof r === 'string' && parseDate(r))))
      return new BDuration(l.ms - asDate(r)!.ms);
    const parts =
      typeof r === 'string'
        ? parseDurationParts(r)
        : r instanceof BDuration
          ? { years: 0, months: 0, ms: r.ms }
          : typeof r === 'number'
            ? { years: 0, months: 0, ms: r }
            : null;
    if (!parts) throw new EvalError(`cannot ${op === '+' ? 'add' : 'subtract'} a ${typeOf(r)} to a date`);
    return addDuration(l, parts, op === '+' ? 1 : -1);
  }
  if (op === '+' && (typeof l === 'string' || typeof r === 'string'))
    return boundedString(ctx, display(l) + display(r));
  if (l === null || r === null) return null;
  if (typeof l === 'number' && typeof r === 'number') return op === '+' ? l + r : l - r;
  if (l instanceof BDuration && r instanceof BDuration) return new BDuration(op === '+' ? l.ms + r.ms : l.ms - r.ms);
  if (op === '+' && Array.isArray(l) && Array.isArray(r)) {
    step(ctx, l.length + r.length);
    return [...l, ...r];
  }
  throw new EvalError(`cannot apply ${op} to a ${typeOf(l)} and a ${typeOf(r)}`);
}

function multiplicative(op: '*' | '/' | '%', l: Value, r: Value): Value {
  if (l === null || r === null) return null;
  const x = typeof l === 'number' ? l : l instanceof BDuration ? l.ms : null;
  const y = typeof r === 'number' ? r : null;
  if (x === null || y === null) throw new EvalError(`cannot apply ${op} to a ${typeOf(l)} and a ${typeOf(r)}`);
  const n = op === '*' ? x * y : op === '/' ? x / y : x % y;
  return l instanceof BDuration ? new BDuration(n) : n;
}

export function negate(v: Value): Value {
  if (typeof v === 'number') return -v;
  if (v instanceof BDuration) return new BDuration(-v.ms);
  if (v === null) return null;
  throw new EvalError(`cannot negate a ${typeOf(v)}`);
}

export function not(v: Value): boolean {
  return !truthy(v);
}
