// Methods of the Bases expression language, dispatched on the receiver's type: those every value has, then the
// receiver type's own table. The compiler asks for a method by name once; a call then costs a type test and a call.
import { EvalError } from '../runtime.js';
import { BDate, BFile, BLink, BRegex, display, isEmpty, isObject, truthy, typeOf, type Value } from '../values.js';
import { DATE_METHODS } from './date.js';
import { FILE_METHODS } from './file.js';
import { LIST_METHODS } from './list.js';
import { NUMBER_METHODS } from './number.js';
import { OBJECT_METHODS, REGEX_METHODS } from './object.js';
import { STRING_METHODS } from './string.js';
import type { Method, MethodTable } from './types.js';

/** Methods every type has (a missing value included). */
const ANY_METHODS: MethodTable<Value> = new Map<string, Method<Value>>([
  ['isTruthy', (v) => truthy(v)],
  ['isEmpty', (v) => isEmpty(v)],
  [
    'isType',
    (v, a, row, ctx, l) => {
      const want = display(a.length > 0 ? a[0](row, ctx, l) : null).toLowerCase();
      return want === typeOf(v);
    },
  ],
  ['toString', (v) => display(v)],
]);

const TABLES: readonly MethodTable<never>[] = [
  ANY_METHODS,
  STRING_METHODS,
  NUMBER_METHODS,
  DATE_METHODS,
  LIST_METHODS,
  FILE_METHODS,
  OBJECT_METHODS,
  REGEX_METHODS,
];

/** Methods the engine evaluates, on whichever types have them (anything else is refused when compiled). */
export const METHODS: ReadonlySet<string> = new Set(TABLES.flatMap((t) => [...t.keys()]));

/** A missing value answers the list/string tests as empty, and anything else with null. */
const FALSE_ON_NULL = new Set(['contains', 'containsAny', 'containsAll', 'hasTag']);

function noMethod(self: Value, name: string): never {
  throw new EvalError(`a ${typeOf(self)} has no method ${name}()`);
}

/** The method `name` on any receiver: the receiver type's own, or a cell error naming the type. */
export function methodNamed(name: string): Method<Value> {
  const any = ANY_METHODS.get(name);
  if (any) return any;
  const onNull = FALSE_ON_NULL.has(name) ? false : null;
  const str = STRING_METHODS.get(name);
  const num = NUMBER_METHODS.get(name);
  const date = DATE_METHODS.get(name);
  const list = LIST_METHODS.get(name);
  const file = FILE_METHODS.get(name);
  const regex = REGEX_METHODS.get(name);
  const obj = OBJECT_METHODS.get(name);
  return (self, a, row, ctx, l) => {
    if (self === null) return onNull;
    if (typeof self === 'string') return str ? str(self, a, row, ctx, l) : noMethod(self, name);
    if (typeof self === 'number') return num ? num(self, a, row, ctx, l) : noMethod(self, name);
    if (self instanceof BDate) return date ? date(self, a, row, ctx, l) : noMethod(self, name);
    if (Array.isArray(self)) return list ? list(self, a, row, ctx, l) : noMethod(self, name);
    if (self instanceof BFile || self instanceof BLink) return file ? file(self, a, row, ctx, l) : noMethod(self, name);
    if (self instanceof BRegex) return regex ? regex(self, a, row, ctx, l) : noMethod(self, name);
    if (isObject(self)) return obj ? obj(self, a, row, ctx, l) : noMethod(self, name);
    return noMethod(self, name);
  };
}
