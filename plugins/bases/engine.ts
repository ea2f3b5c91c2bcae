// Running one view of a base over the vault's files: compile (filters, formulas with cycles refused, columns),
// filter, sort, group, limit, summarise. Pure over the records and lookup it is given; yields to the event loop
// between slices of rows so that no base holds it, and every step counts against the work budget.
import type { BaseDef, FilterTree, SortKey, ViewDef } from './base-file.js';
import { ROW_VIEW_TYPES } from './base-file.js';
import { type Compiled, type CompileState, compileExpression } from './expr/compile.js';
import { fileField, formulaValue, rowProperty } from './expr/fields.js';
import type { Node, ParseLimits } from './expr/parser.js';
import {
  type EvalContext,
  EvalError,
  type FormulaRef,
  newRow,
  type Row,
  step,
  type VaultLookup,
  type WorkBudget,
} from './expr/runtime.js';
import { BDate, type Cell, equals, type FileRecord, sortCompare, toCell, truthy, type Value } from './expr/values.js';
import { basesRefusals } from './refusals.js';
import { BUILTIN_SUMMARIES, summarise } from './summaries.js';

export interface EngineLimits extends ParseLimits {
  readonly maxWorkSteps: number;
  readonly maxStringChars: number;
  readonly maxFormulas: number;
}

type CompiledFilter =
  | { readonly t: 'expr'; readonly c: Compiled }
  | { readonly t: 'and' | 'or' | 'not'; readonly items: readonly CompiledFilter[] };

export interface Column {
  readonly id: string;
  readonly name: string;
}

export interface CompiledView {
  readonly view: ViewDef;
  readonly columns: readonly Column[];
  readonly needsLinks: boolean;
  readonly needsCtime: boolean;
  /**
   * Whether the view can be answered from the notes alone: its filters can only hold for a note (they require
   * a property, a tag or the md extension) and nothing in it resolves links to arbitrary files. Then the walk
   * for attachments is skipped, unless a property of a note links to a non-note file (the loader checks).
   */
  readonly notesOnly: boolean;
  readonly filter: CompiledFilter | null;
  /** Whether a row passes the filters (null: every row does). */
  readonly test: RowTest | null;
  readonly formulas: ReadonlyMap<string, Compiled>;
  /** The formulas as the evaluator reads them: each with its slot in a row's formula values. */
  readonly formulaRefs: ReadonlyMap<string, FormulaRef>;
  readonly customSummaries: ReadonlyMap<string, Compiled>;
  /** How each column the view names (order, sort, groupBy, summaries) is read. */
  readonly getters: ReadonlyMap<string, ColumnGetter>;
}

type RowTest = (row: Row, ctx: EvalContext) => boolean;
/** A column's value for a row, by the column's id (`rating`, `file.name`, `formula.age`). */
type ColumnGetter = (row: Row, ctx: EvalContext) => Value;

/** Normalise a property id the way Obsidian reads it: bare names are note properties. */
export function propertyId(id: string): string {
  return /^(note|file|formula)\./.test(id) ? id : `note.${id}`;
}

/** Pick the view (the first by default) and compile everything it evaluates, or refuse naming what is wrong. */
export function compileView(base: BaseDef, viewName: string | undefined, limits: EngineLimits): CompiledView {
  let view: ViewDef | undefined;
  if (viewName === undefined) view = base.views[0];
  else view = base.views.find((v) => v.name === viewName);
  if (!view) {
    if (viewName !== undefined || base.views.length > 0)
      basesRefusals.refuse('bases_no_view', {
        view: viewName ?? '',
        views: base.views.map((v) => `"${v.name}"`).join(', ') || '(none)',
      });
    // A base without views still answers: every file, in path order, its name as the one column.
    view = {
      type: 'table',
      name: '(all files)',
      filters: null,
      order: ['file.name'],
      sort: [],
      groupBy: null,
      limit: null,
      summaries: {},
    };
  }
  if (!ROW_VIEW_TYPES.has(view.type))
    basesRefusals.refuse('bases_unsupported', {
      feature: `the view type "${view.type}"`,
      where: `view "${view.name}"`,
    });
  const state: CompileState = { limits, regexes: new WeakMap() };
  const names = Object.keys(base.formulas);
  if (names.length > limits.maxFormulas)
    basesRefusals.refuse('bases_too_complex', {
      problem: `${names.length} formulas (the most is ${limits.maxFormulas})`,
      setting: 'bases.maxFormulas',
    });
  const formulas = new Map<string, Compiled>();
  for (const n of names) formulas.set(n, compileExpression(base.formulas[n], state, `formula "${n}"`));
  refuseCycles(formulas);
  const compileFilter = (f: FilterTree, where: string): CompiledFilter => {
    if (typeof f === 'string') return { t: 'expr', c: compileExpression(f, state, where) };
    const key = Object.keys(f)[0] as 'and' | 'or' | 'not';
    return { t: key, items: (f as Record<string, readonly FilterTree[]>)[key].map((x) => compileFilter(x, where)) };
  };
  const parts: CompiledFilter[] = [];
  if (base.filters !== null) parts.push(compileFilter(base.filters, 'filters'));
  if (view.filters !== null) parts.push(compileFilter(view.filters, `view "${view.name}" filters`));
  const customSummaries = new Map<string, Compiled>();
  for (const [prop, summary] of Object.entries(view.summaries)) {
    if ((BUILTIN_SUMMARIES as readonly string[]).includes(summary)) continue;
    const src = base.summaries[summary];
    if (src === undefined)
      basesRefusals.refuse('bases_unsupported', {
        feature: `the summary "${summary}"`,
        where: `view "${view.name}" summaries.${prop} (built-in ones: ${BUILTIN_SUMMARIES.join(', ')}; custom ones are declared under summaries)`,
      });
    customSummaries.set(summary, compileExpression(src, state, `summary "${summary}"`));
  }
  const ids = [
    ...view.order,
    ...view.sort.map((s) => s.property),
    ...(view.groupBy ? [view.groupBy.property] : []),
    ...Object.keys(view.summaries),
  ];
  for (const id of ids) {
    const p = propertyId(id);
    if (p.startsWith('formula.') && !formulas.has(p.slice(8)))
      basesRefusals.refuse('bases_invalid', {
        problem: `view "${view.name}" names ${id}, and the base declares no formula "${p.slice(8)}"`,
      });
  }
  const all = [...formulas.values(), ...customSummaries.values(), ...collect(parts)];
  const fileIds = ids.map(propertyId);
  const filter: CompiledFilter | null =
    parts.length === 0 ? null : parts.length === 1 ? parts[0] : { t: 'and', items: parts };
  return {
    view,
    columns: view.order.map((id) => ({ id, name: base.displayNames[id] ?? base.displayNames[propertyId(id)] ?? id })),
    needsLinks: all.some((c) => c.needsLinks) || fileIds.some((p) => /^file\.(links|backlinks|embeds)$/.test(p)),
    needsCtime: all.some((c) => c.needsCtime) || fileIds.includes('file.ctime'),
    notesOnly:
      parts.some(excludesAttachments) &&
      !all.some((c) => c.resolvesFiles || c.needsLinks) &&
      !fileIds.some((p) => /^file\.(links|backlinks|embeds)$/.test(p)),
    filter,
    test: filter === null ? null : rowTest(filter),
    formulas,
    formulaRefs: new Map([...formulas].map(([name, c], slot) => [name, { ev: c.ev, slot }] as const)),
    customSummaries,
    getters: new Map(ids.map((id) => [id, columnGetter(id)] as const)),
  };
}

/**
 * Whether a filter can hold only for a note: a file with no properties, no tags and another extension (an
 * attachment) fails it. Conservative: anything not recognised here is assumed to let attachments through.
 */
function excludesAttachments(f: CompiledFilter): boolean {
  if (f.t === 'and') return f.items.some(excludesAttachments);
  if (f.t === 'or') return f.items.length > 0 && f.items.every(excludesAttachments);
  if (f.t !== 'expr') return false;
  return nodeExcludesAttachments(f.c.tree);
}

const isFileMember = (n: Node, name: string) =>
  n.t === 'member' && n.name === name && n.obj.t === 'id' && n.obj.name === 'file';
/** A bare or note. property (null on an attachment). */
const isProperty = (n: Node) =>
  (n.t === 'id' && !['file', 'note', 'formula', 'this'].includes(n.name)) ||
  (n.t === 'member' && n.obj.t === 'id' && n.obj.name === 'note');

function nodeExcludesAttachments(n: Node): boolean {
  if (n.t === 'bin') {
    if (n.op === '&&') return nodeExcludesAttachments(n.l) || nodeExcludesAttachments(n.r);
    if (n.op === '||') return nodeExcludesAttachments(n.l) && nodeExcludesAttachments(n.r);
    const lit = (x: Node) => x.t === 'lit' && x.v !== null;
    if (n.op === '==') {
      if (
        (isFileMember(n.l, 'ext') && n.r.t === 'lit' && n.r.v === 'md') ||
        (isFileMember(n.r, 'ext') && n.l.t === 'lit' && n.l.v === 'md')
      )
        return true;
      return (isProperty(n.l) && lit(n.r)) || (isProperty(n.r) && lit(n.l));
    }
    // Ordering against null is false, so a property compared with a literal fails on an attachment.
    if (n.op === '<' || n.op === '<=' || n.op === '>' || n.op === '>=')
      return (isProperty(n.l) && lit(n.r)) || (isProperty(n.r) && lit(n.l));
    return false;
  }
  if (n.t === 'call' && n.callee.t === 'member' && n.callee.obj.t === 'id' && n.callee.obj.name === 'file')
    return n.callee.name === 'hasTag' || n.callee.name === 'hasProperty';
  return isProperty(n);
}

function collect(fs: readonly CompiledFilter[]): Compiled[] {
  return fs.flatMap((f) => (f.t === 'expr' ? [f.c] : collect(f.items)));
}

function refuseCycles(formulas: ReadonlyMap<string, Compiled>): void {
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string, path: string[]): void => {
    const s = state.get(name);
    if (s === 'done' || !formulas.has(name)) return;
    if (s === 'visiting') {
      const cycle = [...path.slice(path.indexOf(name)), name];
      basesRefusals.refuse('bases_formula_cycle', { cycle: cycle.map((n) => `formula.${n}`).join(' → ') });
    }
    state.set(name, 'visiting');
    for (const dep of formulas.get(name)!.formulas) visit(dep, [...path, name]);
    state.set(name, 'done');
  };
  for (const n of formulas.keys()) visit(n, []);
}

export interface ViewRow {
  readonly path: string;
  readonly cells: Readonly<Record<string, Cell>>;
  readonly group: Cell | null;
}

export interface Summary {
  readonly column: string;
  readonly summary: string;
  readonly value: Cell;
}

export interface ViewResult {
  /** Every row of the view after filter, sort and limit (cells are built only for the page asked). */
  readonly total: number;
  readonly rows: readonly ViewRow[];
  readonly groups: readonly { readonly key: Cell; readonly count: number; readonly summaries?: readonly Summary[] }[];
  readonly summaries: readonly Summary[];
}

export interface RunOptions {
  /** The files a base starts from; in path order is fastest (rows that sort equal keep path order). */
  readonly records: readonly FileRecord[];
  readonly vault: VaultLookup;
  readonly nowMs: number;
  readonly thisRec: FileRecord | null;
  readonly limits: EngineLimits;
  readonly offset: number;
  readonly pageSize: number;
  readonly signal?: AbortSignal;
}

/** Rows between looks at the clock. */
const SLICE = 32;
/** Rows per work step a pass over the rows counts (besides what evaluating them counts). */
const ROWS_PER_STEP = 256;
/** Work between turns of the event loop: a base never holds it longer than about this (plus one slice). */
const TURN_MS = 8;

/** Gives the event loop a turn once the query has held it for TURN_MS, and stops there if the call was abandoned. */
class Turns {
  private last = performance.now();
  constructor(private readonly signal: AbortSignal | undefined) {}
  due(): boolean {
    return performance.now() - this.last >= TURN_MS;
  }
  async take(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.signal?.throwIfAborted();
    this.last = performance.now();
  }
}

export async function runView(cv: CompiledView, o: RunOptions): Promise<ViewResult> {
  const budget: WorkBudget = { steps: 0, max: o.limits.maxWorkSteps, maxStringChars: o.limits.maxStringChars };
  const ctx: EvalContext = {
    vault: o.vault,
    nowMs: o.nowMs,
    now: new BDate(o.nowMs, true),
    budget,
    formulas: cv.formulaRefs,
    thisRec: o.thisRec,
  };
  const turns = new Turns(o.signal);
  const kept: Row[] = [];
  for (let i = 0; i < o.records.length; i++) {
    if (i % SLICE === SLICE - 1 && turns.due()) await turns.take();
    budget.steps++;
    const row = newRow(o.records[i]);
    if (cv.test === null || cv.test(row, ctx)) kept.push(row);
  }
  // The path is the last sort key, so that rows equal on the view's keys keep one order.
  if (!inPathOrder(kept)) kept.sort((a, b) => (a.rec.path < b.rec.path ? -1 : a.rec.path > b.rec.path ? 1 : 0));
  // Each key column's values once per row (group first), then the row positions sorted by them.
  const keys: SortKey[] = [...(cv.view.groupBy ? [cv.view.groupBy] : []), ...cv.view.sort];
  const columns = new Map<string, Value[]>();
  for (const k of keys) {
    if (columns.has(k.property)) continue;
    const get = cv.getters.get(k.property)!;
    const values: Value[] = new Array(kept.length);
    for (let i = 0; i < kept.length; i++) {
      if (i % ROWS_PER_STEP === ROWS_PER_STEP - 1) budget.steps++;
      if (i % SLICE === SLICE - 1 && turns.due()) await turns.take();
      values[i] = valueOf(get, kept[i], ctx);
    }
    columns.set(k.property, values);
  }
  budget.steps += Math.ceil(kept.length * Math.log2(kept.length + 1));
  if (budget.steps > budget.max)
    basesRefusals.refuse('bases_too_costly', { limit: budget.max, setting: 'bases.maxWorkSteps' });
  const order = Array.from(kept, (_, i) => i);
  if (keys.length > 0) {
    const keyed = keys.map((k) => ({ values: columns.get(k.property)!, sign: k.direction === 'DESC' ? -1 : 1 }));
    order.sort((i, j) => {
      for (const k of keyed) {
        const c = sortCompare(k.values[i], k.values[j]);
        if (c !== 0) return k.sign * c;
      }
      return i - j;
    });
  }
  const limited = cv.view.limit !== null ? order.slice(0, cv.view.limit) : order;
  if (turns.due()) await turns.take();
  // Groups over the whole view; one entry per distinct key, in view order (rows of a group are contiguous).
  const groupKeys = cv.view.groupBy ? columns.get(cv.view.groupBy.property)! : null;
  const groups: { key: Value; count: number; start: number }[] = [];
  if (groupKeys) {
    for (let p = 0; p < limited.length; p++) {
      const key = groupKeys[limited[p]];
      const last = groups[groups.length - 1];
      if (last && equals(last.key, key)) last.count++;
      else groups.push({ key, count: 1, start: p });
    }
  }
  // Each summarised column's values once (in view order), for the view's summaries and its groups'.
  const summarised = new Map<string, Value[]>();
  for (const column of Object.keys(cv.view.summaries)) {
    const held = columns.get(column);
    const get = cv.getters.get(column)!;
    const values: Value[] = new Array(limited.length);
    for (let p = 0; p < limited.length; p++) {
      if (p % SLICE === SLICE - 1 && turns.due()) await turns.take();
      values[p] = held ? held[limited[p]] : valueOf(get, kept[limited[p]], ctx);
    }
    summarised.set(column, values);
    budget.steps += limited.length;
  }
  const summariesOf = (from: number, to: number): Summary[] =>
    Object.entries(cv.view.summaries).map(([column, summary]) => {
      const all = summarised.get(column)!;
      const values = from === 0 && to === all.length ? all : all.slice(from, to);
      return { column, summary, value: toCell(summarise(summary, values, cv.customSummaries, ctx)) };
    });
  const summaries = summariesOf(0, limited.length);
  const pageEnd = Math.min(limited.length, o.offset + o.pageSize);
  const page = limited.slice(o.offset, pageEnd).map((i): ViewRow => {
    const row = kept[i];
    const cells: Record<string, Cell> = {};
    for (const c of cv.columns) cells[c.id] = cellOf(cv.getters.get(c.id)!, row, ctx);
    return { path: row.rec.path, cells, group: groupKeys ? toCell(groupKeys[i]) : null };
  });
  return {
    total: limited.length,
    rows: page,
    // A group's own summaries (Obsidian shows them under each group) come with the groups that have rows on the page.
    groups: groups.map((g) => {
      const onPage = g.start < pageEnd && g.start + g.count > o.offset;
      return {
        key: toCell(g.key),
        count: g.count,
        ...(onPage && summaries.length > 0 ? { summaries: summariesOf(g.start, g.start + g.count) } : {}),
      };
    }),
    summaries,
  };
}

function inPathOrder(rows: readonly Row[]): boolean {
  for (let i = 1; i < rows.length; i++) if (rows[i - 1].rec.path > rows[i].rec.path) return false;
  return true;
}

/** The filters as one test per row: a filter that errors on a row (a method on the wrong type) leaves it out, as Obsidian does. */
function rowTest(f: CompiledFilter): RowTest {
  switch (f.t) {
    case 'expr': {
      const ev = f.c.ev;
      return (row, ctx) => {
        try {
          return truthy(ev(row, ctx, undefined));
        } catch (e) {
          if (e instanceof EvalError) return false;
          throw e;
        }
      };
    }
    case 'and': {
      const items = f.items.map(rowTest);
      return (row, ctx) => items.every((x) => x(row, ctx));
    }
    case 'or': {
      const items = f.items.map(rowTest);
      return (row, ctx) => items.some((x) => x(row, ctx));
    }
    case 'not': {
      // Obsidian's `not` holds when none of its items holds.
      const items = f.items.map(rowTest);
      return (row, ctx) => !items.some((x) => x(row, ctx));
    }
  }
}

/** How a column's value is read, by its id; decided once per compiled view. */
function columnGetter(id: string): ColumnGetter {
  const p = propertyId(id);
  const dot = p.indexOf('.');
  const ns = p.slice(0, dot);
  const name = p.slice(dot + 1);
  if (ns === 'formula') return (row, ctx) => formulaValue(name, row, ctx);
  if (ns === 'file')
    return (row, ctx) => {
      step(ctx, 2);
      return fileField(row.rec, name, ctx);
    };
  return (row, ctx) => rowProperty(row, name, ctx);
}

/** A column's value for sorting, grouping and summaries: an error counts as no value. */
function valueOf(get: ColumnGetter, row: Row, ctx: EvalContext): Value {
  try {
    return get(row, ctx);
  } catch (e) {
    if (e instanceof EvalError) return null;
    throw e;
  }
}

function cellOf(get: ColumnGetter, row: Row, ctx: EvalContext): Cell {
  try {
    return toCell(get(row, ctx));
  } catch (e) {
    if (e instanceof EvalError) return { type: 'error', value: e.message };
    throw e;
  }
}
