// Running one view of a base over the vault's files: compile (filters, formulas with cycles refused, columns),
// filter, sort, group, limit, summarise. Pure over the records and lookup it is given; yields to the event loop
// between slices of rows so that no base holds it, and every step counts against the work budget.
import type { BaseDef, FilterTree, SortKey, ViewDef } from './base-file.js';
import { ROW_VIEW_TYPES } from './base-file.js';
import { type Compiled, type CompileState, compileExpression } from './expr/compile.js';
import {
  type EvalContext,
  EvalError,
  evaluate,
  formulaValue,
  newRow,
  noteProperty,
  type Row,
  type VaultLookup,
  type WorkBudget,
} from './expr/evaluate.js';
import type { Node, ParseLimits } from './expr/parser.js';
import {
  BDate,
  BDuration,
  type Cell,
  display,
  equals,
  type FileRecord,
  isEmpty,
  sortCompare,
  toCell,
  truthy,
  type Value,
} from './expr/values.js';
import { basesRefusals } from './refusals.js';

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
  readonly formulas: ReadonlyMap<string, Compiled>;
  readonly customSummaries: ReadonlyMap<string, Compiled>;
  readonly regexes: WeakMap<object, RegExp>;
}

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
  return {
    view,
    columns: view.order.map((id) => ({ id, name: base.displayNames[id] ?? base.displayNames[propertyId(id)] ?? id })),
    needsLinks: all.some((c) => c.needsLinks) || fileIds.some((p) => /^file\.(links|backlinks|embeds)$/.test(p)),
    needsCtime: all.some((c) => c.needsCtime) || fileIds.includes('file.ctime'),
    notesOnly:
      parts.some(excludesAttachments) &&
      !all.some((c) => c.resolvesFiles || c.needsLinks) &&
      !fileIds.some((p) => /^file\.(links|backlinks|embeds)$/.test(p)),
    filter: parts.length === 0 ? null : parts.length === 1 ? parts[0] : { t: 'and', items: parts },
    formulas,
    customSummaries,
    regexes: state.regexes,
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
  readonly records: readonly FileRecord[];
  readonly vault: VaultLookup;
  readonly nowMs: number;
  readonly thisRec: FileRecord | null;
  readonly limits: EngineLimits;
  readonly offset: number;
  readonly pageSize: number;
  readonly signal?: AbortSignal;
}

/** Rows evaluated between yields to the event loop. */
const SLICE = 256;

const pause = () => new Promise<void>((resolve) => setImmediate(resolve));

export async function runView(cv: CompiledView, o: RunOptions): Promise<ViewResult> {
  const budget: WorkBudget = { steps: 0, max: o.limits.maxWorkSteps, maxStringChars: o.limits.maxStringChars };
  const formulaTrees = new Map([...cv.formulas].map(([k, c]) => [k, c.tree] as const));
  const ctx: EvalContext = {
    vault: o.vault,
    nowMs: o.nowMs,
    budget,
    formulas: formulaTrees,
    regexes: cv.regexes as EvalContext['regexes'],
    thisRec: o.thisRec,
  };
  const kept: Row[] = [];
  for (let i = 0; i < o.records.length; i++) {
    if (i % SLICE === SLICE - 1) {
      await pause();
      o.signal?.throwIfAborted();
    }
    budget.steps++;
    const row = newRow(o.records[i]);
    if (cv.filter === null || passes(cv.filter, row, ctx)) kept.push(row);
  }
  const value = (row: Row, id: string): Value => {
    try {
      return columnValue(row, id, ctx);
    } catch (e) {
      if (e instanceof EvalError) return null;
      throw e;
    }
  };
  // Sort keys once per row (group first), then the path as the last key so equal rows keep one order.
  const keys: SortKey[] = [...(cv.view.groupBy ? [cv.view.groupBy] : []), ...cv.view.sort];
  const keyed = kept.map((row, i) => {
    if (i % SLICE === SLICE - 1) budget.steps++;
    return { row, k: keys.map((k) => value(row, k.property)) };
  });
  budget.steps += Math.ceil(keyed.length * Math.log2(keyed.length + 1));
  if (budget.steps > budget.max)
    basesRefusals.refuse('bases_too_costly', { limit: budget.max, setting: 'bases.maxWorkSteps' });
  keyed.sort((a, b) => {
    for (let j = 0; j < keys.length; j++) {
      const c = sortCompare(a.k[j], b.k[j]);
      if (c !== 0) return keys[j].direction === 'DESC' ? -c : c;
    }
    return a.row.rec.path < b.row.rec.path ? -1 : a.row.rec.path > b.row.rec.path ? 1 : 0;
  });
  const limited = cv.view.limit !== null ? keyed.slice(0, cv.view.limit) : keyed;
  await pause();
  // Groups over the whole view; one entry per distinct key, in view order (rows of a group are contiguous).
  const groups: { key: Value; count: number; start: number }[] = [];
  if (cv.view.groupBy) {
    for (let i = 0; i < limited.length; i++) {
      const r = limited[i];
      const last = groups[groups.length - 1];
      if (last && equals(last.key, r.k[0])) last.count++;
      else groups.push({ key: r.k[0], count: 1, start: i });
    }
  }
  // Each summarised column's values once, for the view's summaries and its groups'.
  const columnValues = new Map<string, Value[]>();
  for (const column of Object.keys(cv.view.summaries)) {
    columnValues.set(
      column,
      limited.map((r) => value(r.row, column)),
    );
    budget.steps += limited.length;
  }
  const summariesOf = (from: number, to: number) =>
    Object.entries(cv.view.summaries).map(([column, summary]) => {
      const all = columnValues.get(column)!;
      const values = from === 0 && to === all.length ? all : all.slice(from, to);
      return { column, summary, value: toCell(summarise(summary, values, cv, ctx)) };
    });
  const summaries = summariesOf(0, limited.length);
  const pageEnd = Math.min(limited.length, o.offset + o.pageSize);
  const page = limited.slice(o.offset, pageEnd).map(({ row, k }): ViewRow => {
    const cells: Record<string, Cell> = {};
    for (const c of cv.columns) cells[c.id] = cellOf(row, c.id, ctx);
    return { path: row.rec.path, cells, group: cv.view.groupBy ? toCell(k[0]) : null };
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

function passes(f: CompiledFilter, row: Row, ctx: EvalContext): boolean {
  switch (f.t) {
    case 'expr':
      try {
        return truthy(evaluate(f.c.tree, row, ctx));
      } catch (e) {
        // A filter that errors on a row (a method on the wrong type) leaves the row out, as Obsidian does.
        if (e instanceof EvalError) return false;
        throw e;
      }
    case 'and':
      return f.items.every((x) => passes(x, row, ctx));
    case 'or':
      return f.items.some((x) => passes(x, row, ctx));
    case 'not':
      // Obsidian's `not` holds when none of its items holds.
      return !f.items.some((x) => passes(x, row, ctx));
  }
}

function columnValue(row: Row, id: string, ctx: EvalContext): Value {
  const p = propertyId(id);
  const dot = p.indexOf('.');
  const ns = p.slice(0, dot);
  const name = p.slice(dot + 1);
  if (ns === 'formula') return formulaValue(name, row, ctx);
  if (ns === 'file') {
    return evaluate({ t: 'member', obj: { t: 'id', name: 'file' }, name }, row, ctx);
  }
  const props = row.rec.properties;
  if (!props || !Object.hasOwn(props, name)) return null;
  return noteProperty(row.rec, name, ctx);
}

function cellOf(row: Row, id: string, ctx: EvalContext): Cell {
  try {
    return toCell(columnValue(row, id, ctx));
  } catch (e) {
    if (e instanceof EvalError) return { type: 'error', value: e.message };
    throw e;
  }
}

function summarise(summary: string, values: Value[], cv: CompiledView, ctx: EvalContext): Value {
  const nums = values.flatMap((v) => (typeof v === 'number' ? [v] : v instanceof BDuration ? [v.ms] : []));
  const dates = values.filter((v): v is BDate => v instanceof BDate);
  const sum = nums.reduce((a, b) => a + b, 0);
  switch (summary) {
    case 'Average':
      return nums.length ? sum / nums.length : null;
    case 'Sum':
      return nums.length ? sum : null;
    case 'Min':
      return nums.length ? Math.min(...nums) : dates.length ? dates.reduce((a, b) => (b.ms < a.ms ? b : a)) : null;
    case 'Max':
      return nums.length ? Math.max(...nums) : dates.length ? dates.reduce((a, b) => (b.ms > a.ms ? b : a)) : null;
    case 'Range':
      if (nums.length) return Math.max(...nums) - Math.min(...nums);
      if (dates.length) return new BDuration(Math.max(...dates.map((d) => d.ms)) - Math.min(...dates.map((d) => d.ms)));
      return null;
    case 'Median': {
      if (!nums.length) return null;
      const s = [...nums].sort((a, b) => a - b);
      const m = s.length >> 1;
      return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
    }
    case 'Stddev': {
      if (!nums.length) return null;
      const mean = sum / nums.length;
      return Math.sqrt(nums.reduce((a, b) => a + (b - mean) ** 2, 0) / nums.length);
    }
    case 'Earliest':
      return dates.length ? dates.reduce((a, b) => (b.ms < a.ms ? b : a)) : null;
    case 'Latest':
      return dates.length ? dates.reduce((a, b) => (b.ms > a.ms ? b : a)) : null;
    case 'Checked':
      return values.filter((v) => v === true).length;
    case 'Unchecked':
      return values.filter((v) => v === false).length;
    case 'Empty':
      return values.filter((v) => isEmpty(v)).length;
    case 'Filled':
      return values.filter((v) => !isEmpty(v)).length;
    case 'Count':
      return values.length;
    case 'Unique': {
      const seen = new Set<string>();
      for (const v of values) if (!isEmpty(v)) seen.add(`${typeof v}:${display(v)}`);
      return seen.size;
    }
    default: {
      const c = cv.customSummaries.get(summary)!;
      try {
        // A custom summary sees the column's values as `values`, outside any row.
        const row = newRow(
          ctx.thisRec ?? { path: '', size: 0, mtimeMs: 0, ctimeMs: null, tags: [], properties: null, isNote: false },
        );
        return evaluate(c.tree, row, ctx, { values });
      } catch (e) {
        if (e instanceof EvalError) return `error: ${e.message}`;
        throw e;
      }
    }
  }
}
