// What every part of the evaluator shares: the context a query evaluates in (vault lookup, clock, work budget,
// formulas), a row and its formula slots, the shape of a compiled expression, and the budget's bounds.
// Pure: no I/O; exhausting the budget is a refusal, a value of the wrong type is an EvalError (a cell error).
import { basesRefusals } from '../refusals.js';
import type { BDate, BLink, FileRecord, Value } from './values.js';
import { typeOf } from './values.js';

/** A value that is wrong for the operation applied to it: shown in its cell, never a wrong answer. */
export class EvalError extends Error {}

/** What the evaluator may ask of the vault; the query loads it once (links only when an expression needs them). */
export interface VaultLookup {
  file(path: string): FileRecord | undefined;
  resolve(target: string, fromPath: string): string | null;
  links(rec: FileRecord): readonly BLink[];
  embeds(rec: FileRecord): readonly BLink[];
  backlinks(rec: FileRecord): readonly BLink[];
  /** The property's type from `.obsidian/types.json`, when the vault declares one. */
  propertyType(name: string): string | undefined;
  ctime(rec: FileRecord): number | null;
  /** Optional: where a record's converted property values are kept across the queries that share this lookup. */
  memo?(rec: FileRecord): Map<string, Value>;
}

export interface WorkBudget {
  steps: number;
  readonly max: number;
  readonly maxStringChars: number;
}

/** A formula of the view being run: its evaluator and its slot in each row's formula values. */
export interface FormulaRef {
  readonly ev: Ev;
  readonly slot: number;
}

export interface EvalContext {
  readonly vault: VaultLookup;
  readonly nowMs: number;
  /** `now()`, made once per query (values are never changed in place, so rows share it). */
  readonly now: BDate;
  readonly budget: WorkBudget;
  readonly formulas: ReadonlyMap<string, FormulaRef>;
  readonly thisRec: FileRecord | null;
}

/** Marks a formula slot whose value is being computed (a cycle at run time meets it). */
export const IN_PROGRESS: unique symbol = Symbol('in progress');

export type FormulaSlot = Value | EvalError | typeof IN_PROGRESS | undefined;

export interface Row {
  readonly rec: FileRecord;
  /** Formula values by slot, made on a row's first formula (most rows of a large view never evaluate one). */
  formulas: FormulaSlot[] | null;
  /** The record's converted property values (the lookup's memo, looked up on the row's first property; null: none). */
  memo: Map<string, Value> | null | undefined;
}

export function newRow(rec: FileRecord): Row {
  return { rec, formulas: null, memo: undefined };
}

/** Lambda parameters (`value`, `index`, `acc`) and a custom summary's `values`: the only names locals hold. */
export type Locals = Readonly<Record<string, Value>>;
export const LOCAL_NAMES: ReadonlySet<string> = new Set(['value', 'index', 'acc', 'values']);

/** An expression compiled to a closure: its value for a row. */
export type Ev = (row: Row, ctx: EvalContext, locals: Locals | undefined) => Value;

/** The namespaces an identifier can name: never values themselves, only something to take a member of. */
export class Namespace {
  constructor(
    readonly kind: 'note' | 'formula' | 'this',
    readonly rec: FileRecord | null,
  ) {}
}

export type Scoped = Value | Namespace;

/** An expression that may name a namespace (`note`, `this`), compiled: a member or index of it is taken next. */
export type ScopedEv = (row: Row, ctx: EvalContext, locals: Locals | undefined) => Scoped;

export const DAY = 86_400_000;

export function step(ctx: EvalContext, n = 1): void {
  ctx.budget.steps += n;
  if (ctx.budget.steps > ctx.budget.max)
    basesRefusals.refuse('bases_too_costly', { limit: ctx.budget.max, setting: 'bases.maxWorkSteps' });
}

export function boundedString(ctx: EvalContext, s: string): string {
  if (s.length > ctx.budget.maxStringChars)
    basesRefusals.refuse('bases_too_costly', {
      limit: ctx.budget.maxStringChars,
      setting: 'bases.maxStringChars',
    });
  return s;
}

/** The i-th argument's value (null when not given); arguments are evaluated only when a function reads them. */
export function argValue(
  args: readonly Ev[],
  i: number,
  row: Row,
  ctx: EvalContext,
  locals: Locals | undefined,
): Value {
  return i < args.length ? args[i](row, ctx, locals) : null;
}

export function needString(v: Value, what: string): string {
  if (typeof v !== 'string') throw new EvalError(`${what} needs a string, got a ${typeOf(v)}`);
  return v;
}

export function needNumber(v: Value, what: string, fallback?: number): number {
  if (v === null && fallback !== undefined) return fallback;
  if (typeof v !== 'number') throw new EvalError(`${what} needs a number, got a ${typeOf(v)}`);
  return v;
}
