// The shape of a method of the Bases expression language: the receiver, its compiled arguments (read lazily),
// the row and the context. Each type's methods sit in one table; the compiler picks them by name.
import type { EvalContext, Ev, Locals, Row } from '../runtime.js';
import type { Value } from '../values.js';

export type Method<T> = (self: T, a: readonly Ev[], row: Row, ctx: EvalContext, locals: Locals | undefined) => Value;

export type MethodTable<T> = ReadonlyMap<string, Method<T>>;
