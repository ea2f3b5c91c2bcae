// The tree-walking evaluator of the Bases expression language: namespaces (note, file, formula, this), operators,
// global functions and methods, every step counted against a work budget. Pure: the vault comes in as a lookup.
// A runtime type error is a cell error (EvalError), as in Obsidian; exhausting the budget is a refusal.
import { basesRefusals } from '../refusals.js';
import type { Node } from './parser.js';
import {
  addDuration,
  asDate,
  BDate,
  BDuration,
  BFile,
  BLink,
  BRegex,
  compare,
  display,
  equals,
  type FileRecord,
  isEmpty,
  isObject,
  parseDate,
  parseDurationParts,
  setOwn,
  sortCompare,
  truthy,
  typeOf,
  type Value,
} from './values.js';

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

export interface EvalContext {
  readonly vault: VaultLookup;
  readonly nowMs: number;
  readonly budget: WorkBudget;
  readonly formulas: ReadonlyMap<string, Node>;
  readonly regexes: WeakMap<Node, RegExp>;
  readonly thisRec: FileRecord | null;
}

export interface Row {
  readonly rec: FileRecord;
  /** Made on a row's first formula (most rows of a large view never evaluate one). */
  formulaCache: Map<string, Value | EvalError> | null;
  inProgress: Set<string> | null;
}

export function newRow(rec: FileRecord): Row {
  return { rec, formulaCache: null, inProgress: null };
}

type Locals = Readonly<Record<string, Value>>;

/** The namespaces an identifier can name: never values themselves, only something to take a member of. */
class Namespace {
  constructor(
    readonly kind: 'note' | 'formula' | 'this',
    readonly rec: FileRecord | null,
  ) {}
}

type Scoped = Value | Namespace;

const DAY = 86_400_000;

function step(ctx: EvalContext, n = 1): void {
  ctx.budget.steps += n;
  if (ctx.budget.steps > ctx.budget.max)
    basesRefusals.refuse('bases_too_costly', { limit: ctx.budget.max, setting: 'bases.maxWorkSteps' });
}

function boundedString(ctx: EvalContext, s: string): string {
  if (s.length > ctx.budget.maxStringChars)
    basesRefusals.refuse('bases_too_costly', {
      limit: ctx.budget.maxStringChars,
      setting: 'bases.maxStringChars',
    });
  return s;
}

export function evaluate(node: Node, row: Row, ctx: EvalContext, locals?: Locals): Value {
  const v = evalScoped(node, row, ctx, locals);
  if (v instanceof Namespace) {
    if (v.kind === 'this' && v.rec) return new BFile(v.rec);
    throw new EvalError(`"${v.kind}" is a namespace, not a value: name one of its members`);
  }
  return v;
}

/** A formula's value for a row (cached; a cycle at run time is an error, though compile refuses them first). */
export function formulaValue(name: string, row: Row, ctx: EvalContext): Value {
  const cache = (row.formulaCache ??= new Map());
  const cached = cache.get(name);
  if (cached instanceof EvalError) throw cached;
  if (cached !== undefined) return cached;
  const f = ctx.formulas.get(name);
  if (!f) return null;
  const inProgress = (row.inProgress ??= new Set());
  if (inProgress.has(name)) throw new EvalError(`the formula "${name}" refers to itself`);
  inProgress.add(name);
  try {
    const v = evaluate(f, row, ctx);
    cache.set(name, v);
    return v;
  } catch (e) {
    if (e instanceof EvalError) cache.set(name, e);
    throw e;
  } finally {
    inProgress.delete(name);
  }
}

/** A frontmatter value as a typed value: links, dates (by types.json, else by their ISO shape), lists, objects. */
export function propertyValue(raw: unknown, type: string | undefined, rec: FileRecord, ctx: EvalContext): Value {
  if (raw === undefined || raw === null) return null;
  if (Array.isArray(raw)) return raw.map((x) => propertyValue(x, type === 'multitext' ? 'text' : type, rec, ctx));
  if (typeof raw === 'string') {
    const link = /^\s*!?\[\[([^\]|#^]*)(?:[#^][^\]|]*)?(?:\|([^\]]*))?\]\]\s*$/.exec(raw);
    if (link) return new BLink(link[1], link[2] ?? null, ctx.vault.resolve(link[1], rec.path));
    if (type === 'number') return raw.trim() !== '' && Number.isFinite(Number(raw)) ? Number(raw) : raw;
    if (type === 'checkbox') return raw === 'true' ? true : raw === 'false' ? false : raw;
    if (type === undefined || type === 'date' || type === 'datetime') {
      const d = parseDate(raw);
      if (d) return type === 'date' ? new BDate(d.ms - (d.ms % DAY), false) : d;
    }
    return raw;
  }
  if (typeof raw === 'number' || typeof raw === 'boolean') return raw;
  if (typeof raw === 'object') {
    const out: Record<string, Value> = {};
    for (const [k, x] of Object.entries(raw as Record<string, unknown>))
      setOwn(out, k, propertyValue(x, undefined, rec, ctx));
    return out;
  }
  return null;
}

function property(rec: FileRecord | null, name: string, ctx: EvalContext): Value {
  if (!rec?.properties || !Object.hasOwn(rec.properties, name)) return null;
  return noteProperty(rec, name, ctx);
}

/**
 * A note's property as a typed value, converted once per record while the vault's files and property types are
 * unchanged (the lookup's memo; values are never changed in place, so a memoised one is shared safely).
 */
export function noteProperty(rec: FileRecord, name: string, ctx: EvalContext): Value {
  const memo = ctx.vault.memo?.(rec);
  if (memo) {
    const held = memo.get(name);
    if (held !== undefined || memo.has(name)) return held as Value;
  }
  const v = propertyValue(rec.properties![name], ctx.vault.propertyType(name), rec, ctx);
  memo?.set(name, v);
  return v;
}

function evalScoped(node: Node, row: Row, ctx: EvalContext, locals?: Locals): Scoped {
  step(ctx);
  switch (node.t) {
    case 'lit':
      return node.v;
    case 'regex':
      return new BRegex(ctx.regexes.get(node)!);
    case 'list':
      return node.items.map((x) => evaluate(x, row, ctx, locals));
    case 'obj': {
      const out: Record<string, Value> = {};
      for (const [k, x] of node.entries) setOwn(out, k, evaluate(x, row, ctx, locals));
      return out;
    }
    case 'id':
      return identifier(node.name, row, ctx, locals);
    case 'member':
      return member(evalScoped(node.obj, row, ctx, locals), node.name, row, ctx);
    case 'index': {
      const obj = evalScoped(node.obj, row, ctx, locals);
      const idx = evaluate(node.idx, row, ctx, locals);
      if (obj instanceof Namespace || isObject(obj as Value) || obj instanceof BFile) {
        if (typeof idx !== 'string') throw new EvalError('a property name in [] must be a string');
        return member(obj, idx, row, ctx);
      }
      if (Array.isArray(obj) || typeof obj === 'string') {
        if (typeof idx !== 'number' || !Number.isInteger(idx)) throw new EvalError('a list index must be an integer');
        const i = idx < 0 ? obj.length + idx : idx;
        return (obj as Value[] | string)[i] ?? null;
      }
      if (obj === null) return null;
      throw new EvalError(`a ${typeOf(obj as Value)} cannot be indexed`);
    }
    case 'unary': {
      const v = evaluate(node.arg, row, ctx, locals);
      if (node.op === '!') return !truthy(v);
      if (typeof v === 'number') return -v;
      if (v instanceof BDuration) return new BDuration(-v.ms);
      if (v === null) return null;
      throw new EvalError(`cannot negate a ${typeOf(v)}`);
    }
    case 'bin':
      return binary(node.op, node.l, node.r, row, ctx, locals);
    case 'call':
      return call(node, row, ctx, locals);
  }
}

function identifier(name: string, row: Row, ctx: EvalContext, locals?: Locals): Scoped {
  if (locals && Object.hasOwn(locals, name)) return locals[name];
  switch (name) {
    case 'file':
      return new BFile(row.rec);
    case 'note':
      return new Namespace('note', row.rec);
    case 'formula':
      return new Namespace('formula', row.rec);
    case 'this':
      return new Namespace('this', ctx.thisRec);
    default:
      return property(row.rec, name, ctx);
  }
}

function member(obj: Scoped, name: string, row: Row, ctx: EvalContext): Scoped {
  if (obj instanceof Namespace) {
    if (obj.kind === 'note') return property(obj.rec, name, ctx);
    if (obj.kind === 'formula') return formulaValue(name, row, ctx);
    // this.file, this.note, this.<property>
    if (name === 'file') return obj.rec ? new BFile(obj.rec) : null;
    if (name === 'note') return new Namespace('note', obj.rec);
    return property(obj.rec, name, ctx);
  }
  const v = obj;
  if (v === null) return null;
  if (v instanceof BFile) return fileField(v.rec, name, ctx);
  if (v instanceof BLink) {
    const f = v.resolved ? ctx.vault.file(v.resolved) : undefined;
    if (f) return fileField(f, name, ctx);
    return null;
  }
  if (typeof v === 'string' || Array.isArray(v)) {
    if (name === 'length') return v.length;
    throw new EvalError(`a ${typeOf(v)} has no field "${name}"`);
  }
  if (v instanceof BDate) {
    const d = new Date(v.ms);
    const f: Record<string, number> = {
      year: d.getUTCFullYear(),
      month: d.getUTCMonth() + 1,
      day: d.getUTCDate(),
      hour: d.getUTCHours(),
      minute: d.getUTCMinutes(),
      second: d.getUTCSeconds(),
      millisecond: d.getUTCMilliseconds(),
    };
    if (name in f) return f[name];
    throw new EvalError(`a date has no field "${name}"`);
  }
  if (v instanceof BDuration) {
    const per: Record<string, number> = {
      days: DAY,
      hours: 3_600_000,
      minutes: 60_000,
      seconds: 1000,
      milliseconds: 1,
    };
    if (name in per) return Math.trunc(v.ms / per[name]);
    throw new EvalError(`a duration has no field "${name}"`);
  }
  if (isObject(v)) return Object.hasOwn(v, name) ? v[name] : null;
  throw new EvalError(`a ${typeOf(v)} has no field "${name}"`);
}

export const FILE_FIELDS = [
  'name',
  'basename',
  'path',
  'folder',
  'ext',
  'size',
  'ctime',
  'mtime',
  'tags',
  'links',
  'backlinks',
  'embeds',
  'properties',
  'file',
] as const;

function fileField(rec: FileRecord, name: string, ctx: EvalContext): Value {
  const slash = rec.path.lastIndexOf('/');
  const fileName = rec.path.slice(slash + 1);
  const dot = fileName.lastIndexOf('.');
  switch (name) {
    case 'name':
      return fileName;
    case 'basename':
      return dot > 0 ? fileName.slice(0, dot) : fileName;
    case 'path':
      return rec.path;
    case 'folder':
      return slash < 0 ? '/' : rec.path.slice(0, slash);
    case 'ext':
      return dot > 0 ? fileName.slice(dot + 1) : '';
    case 'size':
      return rec.size;
    case 'mtime':
      return new BDate(rec.mtimeMs, true);
    case 'ctime': {
      const ms = ctx.vault.ctime(rec);
      return ms === null ? null : new BDate(ms, true);
    }
    case 'tags':
      return rec.tags.map((t) => `#${t}`);
    case 'links':
      step(ctx, ctx.vault.links(rec).length);
      return [...ctx.vault.links(rec)];
    case 'embeds':
      return [...ctx.vault.embeds(rec)];
    case 'backlinks':
      step(ctx, ctx.vault.backlinks(rec).length);
      return [...ctx.vault.backlinks(rec)];
    case 'properties': {
      const out: Record<string, Value> = {};
      for (const k of Object.keys(rec.properties ?? {})) setOwn(out, k, property(rec, k, ctx));
      return out;
    }
    case 'file':
      return new BFile(rec);
    default:
      throw new EvalError(`a file has no field "${name}"`);
  }
}

function binary(op: string, ln: Node, rn: Node, row: Row, ctx: EvalContext, locals?: Locals): Value {
  if (op === '&&') return truthy(evaluate(ln, row, ctx, locals)) ? truthy(evaluate(rn, row, ctx, locals)) : false;
  if (op === '||') return truthy(evaluate(ln, row, ctx, locals)) ? true : truthy(evaluate(rn, row, ctx, locals));
  const l = evaluate(ln, row, ctx, locals);
  const r = evaluate(rn, row, ctx, locals);
  switch (op) {
    case '==':
      return equals(l, r);
    case '!=':
      return !equals(l, r);
    case '<':
    case '<=':
    case '>':
    case '>=': {
      const c = compare(l, r);
      if (c === null) return false;
      return op === '<' ? c < 0 : op === '<=' ? c <= 0 : op === '>' ? c > 0 : c >= 0;
    }
    case '+':
    case '-':
      return additive(op, l, r, ctx);
    default: {
      if (l === null || r === null) return null;
      const x = typeof l === 'number' ? l : l instanceof BDuration ? l.ms : null;
      const y = typeof r === 'number' ? r : null;
      if (x === null || y === null) throw new EvalError(`cannot apply ${op} to a ${typeOf(l)} and a ${typeOf(r)}`);
      const n = op === '*' ? x * y : op === '/' ? x / y : x % y;
      return l instanceof BDuration ? new BDuration(n) : n;
    }
  }
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

// --- calls ---------------------------------------------------------------------------------------

/** Global functions the engine evaluates (anything else is refused when the base is compiled). */
export const GLOBAL_FUNCTIONS = new Set([
  'date',
  'now',
  'today',
  'duration',
  'if',
  'link',
  'list',
  'max',
  'min',
  'number',
  'file',
  'image',
  'icon',
  'html',
  'escapeHTML',
]);

/** Methods the engine evaluates, on whichever types have them. */
export const METHODS = new Set([
  // any
  'isTruthy',
  'isType',
  'toString',
  'isEmpty',
  // string
  'contains',
  'containsAll',
  'containsAny',
  'startsWith',
  'endsWith',
  'lower',
  'upper',
  'title',
  'trim',
  'replace',
  'repeat',
  'reverse',
  'slice',
  'split',
  // number
  'abs',
  'ceil',
  'floor',
  'round',
  'toFixed',
  // date
  'date',
  'time',
  'format',
  'relative',
  // list
  'filter',
  'map',
  'reduce',
  'flat',
  'join',
  'sort',
  'unique',
  'mean',
  'median',
  'sum',
  'min',
  'max',
  // link / file
  'asFile',
  'asLink',
  'linksTo',
  'hasLink',
  'hasProperty',
  'hasTag',
  'inFolder',
  // object
  'keys',
  'values',
  // regexp
  'matches',
]);

function call(node: Extract<Node, { t: 'call' }>, row: Row, ctx: EvalContext, locals?: Locals): Value {
  const arg = (i: number): Value => (i < node.args.length ? evaluate(node.args[i], row, ctx, locals) : null);
  const all = (): Value[] => node.args.map((a) => evaluate(a, row, ctx, locals));
  if (node.callee.t === 'id') return globalCall(node.callee.name, node, arg, all, row, ctx, locals);
  if (node.callee.t !== 'member') throw new EvalError('only functions and methods can be called');
  const recv = evalScoped(node.callee.obj, row, ctx, locals);
  const self: Value =
    recv instanceof Namespace ? (recv.kind === 'this' && recv.rec ? new BFile(recv.rec) : null) : recv;
  return method(node.callee.name, self, node, arg, row, ctx, locals);
}

function globalCall(
  name: string,
  node: Extract<Node, { t: 'call' }>,
  arg: (i: number) => Value,
  all: () => Value[],
  row: Row,
  ctx: EvalContext,
  locals?: Locals,
): Value {
  switch (name) {
    case 'now':
      return new BDate(ctx.nowMs, true);
    case 'today':
      return new BDate(ctx.nowMs - (((ctx.nowMs % DAY) + DAY) % DAY), false);
    case 'date': {
      const v = arg(0);
      const d = asDate(v);
      if (!d) throw new EvalError(`date() cannot read ${JSON.stringify(display(v))}`);
      return d;
    }
    case 'duration': {
      const v = arg(0);
      if (v instanceof BDuration) return v;
      if (typeof v === 'number') return new BDuration(v);
      const p = typeof v === 'string' ? parseDurationParts(v) : null;
      if (!p) throw new EvalError(`duration() cannot read ${JSON.stringify(display(v))}`);
      return new BDuration(p.ms + p.months * 30 * DAY + p.years * 365 * DAY);
    }
    case 'if':
      return truthy(arg(0)) ? arg(1) : arg(2);
    case 'link': {
      const v = arg(0);
      const shown = node.args.length > 1 ? display(arg(1)) : null;
      if (v instanceof BFile) return new BLink(v.rec.path, shown, v.rec.path);
      if (v instanceof BLink) return new BLink(v.target, shown ?? v.display, v.resolved);
      const target = display(v).replace(/^\[\[|\]\]$/g, '');
      return new BLink(target, shown, ctx.vault.resolve(target, row.rec.path));
    }
    case 'list': {
      const v = arg(0);
      return Array.isArray(v) ? v : v === null ? [] : [v];
    }
    case 'max':
    case 'min': {
      const nums = all().filter((x): x is number => typeof x === 'number');
      if (nums.length === 0) return null;
      return name === 'max' ? Math.max(...nums) : Math.min(...nums);
    }
    case 'number': {
      const v = arg(0);
      if (typeof v === 'number') return v;
      if (typeof v === 'boolean') return v ? 1 : 0;
      if (v instanceof BDate) return v.ms;
      if (v instanceof BDuration) return v.ms;
      if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
      throw new EvalError(`number() cannot read ${JSON.stringify(display(v))}`);
    }
    case 'file': {
      const v = arg(0);
      if (v instanceof BFile) return v;
      const path = v instanceof BLink ? v.resolved : typeof v === 'string' ? ctx.vault.resolve(v, row.rec.path) : null;
      const rec = path ? ctx.vault.file(path) : undefined;
      return rec ? new BFile(rec) : null;
    }
    case 'image':
    case 'icon':
    case 'html':
      // Display-only in Obsidian: an agent gets the text it would render from.
      return arg(0) === null ? null : display(arg(0));
    case 'escapeHTML':
      return display(arg(0)).replace(
        /[&<>"']/g,
        (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
      );
    default:
      void locals;
      throw new EvalError(`unknown function ${name}()`);
  }
}

function tagKey(t: string): string {
  return t.replace(/^#/, '').toLowerCase();
}

function folderOf(v: Value): string {
  const s = v instanceof BFile ? v.rec.path : v instanceof BLink ? (v.resolved ?? v.target) : display(v);
  return s.replace(/^\/+|\/+$/g, '');
}

function linkPath(v: Value, from: string, ctx: EvalContext): string | null {
  if (v instanceof BFile) return v.rec.path;
  if (v instanceof BLink) return v.resolved;
  if (typeof v === 'string') return ctx.vault.resolve(v.replace(/^\[\[|\]\]$/g, ''), from);
  return null;
}

function needString(v: Value, what: string): string {
  if (typeof v !== 'string') throw new EvalError(`${what} needs a string, got a ${typeOf(v)}`);
  return v;
}

function needNumber(v: Value, what: string, fallback?: number): number {
  if (v === null && fallback !== undefined) return fallback;
  if (typeof v !== 'number') throw new EvalError(`${what} needs a number, got a ${typeOf(v)}`);
  return v;
}

function containsValue(hay: Value, needle: Value): boolean {
  if (typeof hay === 'string') return hay.includes(display(needle));
  if (Array.isArray(hay)) return hay.some((x) => equals(x, needle));
  return false;
}

function method(
  name: string,
  self: Value,
  node: Extract<Node, { t: 'call' }>,
  arg: (i: number) => Value,
  row: Row,
  ctx: EvalContext,
  locals?: Locals,
): Value {
  // Methods every type has.
  switch (name) {
    case 'isTruthy':
      return truthy(self);
    case 'isEmpty':
      return isEmpty(self);
    case 'isType': {
      const want = display(arg(0)).toLowerCase();
      const t = typeOf(self);
      return want === t || (want === 'list' && t === 'list') || (want === 'string' && t === 'string');
    }
    case 'toString':
      return display(self);
  }
  const t = typeOf(self);
  const wrong = (): never => {
    throw new EvalError(`a ${t} has no method ${name}()`);
  };
  if (self === null) {
    // A missing property answers the list/string tests as empty, and anything else with null.
    if (name === 'contains' || name === 'containsAny' || name === 'containsAll' || name === 'hasTag') return false;
    return null;
  }
  if (typeof self === 'string') {
    switch (name) {
      case 'contains':
        return self.includes(display(arg(0)));
      case 'containsAll':
        return node.args.every((_, i) => self.includes(display(arg(i))));
      case 'containsAny':
        return node.args.some((_, i) => self.includes(display(arg(i))));
      case 'startsWith':
        return self.startsWith(display(arg(0)));
      case 'endsWith':
        return self.endsWith(display(arg(0)));
      case 'lower':
        return self.toLowerCase();
      case 'upper':
        return self.toUpperCase();
      case 'title':
        return self.replace(/(^|\s)(\p{L})/gu, (_, a: string, b: string) => a + b.toUpperCase());
      case 'trim':
        return self.trim();
      case 'replace': {
        const p = arg(0);
        const with_ = display(arg(1));
        step(ctx, Math.ceil(self.length / 64));
        const out = p instanceof BRegex ? self.replace(p.re, () => with_) : self.split(display(p)).join(with_);
        return boundedString(ctx, out);
      }
      case 'repeat': {
        const n = needNumber(arg(0), 'repeat()');
        if (n < 0 || !Number.isInteger(n)) throw new EvalError('repeat() needs a whole number ≥ 0');
        if (self.length * n > ctx.budget.maxStringChars) boundedString(ctx, 'x'.repeat(ctx.budget.maxStringChars + 1));
        return self.repeat(n);
      }
      case 'reverse':
        return [...self].reverse().join('');
      case 'slice':
        return self.slice(
          needNumber(arg(0), 'slice()', 0),
          node.args.length > 1 ? needNumber(arg(1), 'slice()') : undefined,
        );
      case 'split': {
        const p = arg(0);
        const n = node.args.length > 1 ? needNumber(arg(1), 'split()') : undefined;
        step(ctx, Math.ceil(self.length / 64));
        return p instanceof BRegex ? self.split(p.re, n) : self.split(display(p), n);
      }
      case 'format':
      case 'date':
      case 'time':
      case 'relative': {
        const d = parseDate(self);
        if (d) return method(name, d, node, arg, row, ctx, locals);
        return wrong();
      }
      default:
        return wrong();
    }
  }
  if (typeof self === 'number') {
    switch (name) {
      case 'abs':
        return Math.abs(self);
      case 'ceil':
        return Math.ceil(self);
      case 'floor':
        return Math.floor(self);
      case 'round': {
        const digits = needNumber(arg(0), 'round()', 0);
        const f = 10 ** Math.max(0, Math.min(15, Math.trunc(digits)));
        return Math.round(self * f) / f;
      }
      case 'toFixed':
        return self.toFixed(Math.max(0, Math.min(20, Math.trunc(needNumber(arg(0), 'toFixed()', 0)))));
      default:
        return wrong();
    }
  }
  if (self instanceof BDate) {
    switch (name) {
      case 'date':
        return new BDate(self.ms - (((self.ms % DAY) + DAY) % DAY), false);
      case 'time': {
        const d = new Date(self.ms);
        return [d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()].map((x) => String(x).padStart(2, '0')).join(':');
      }
      case 'format':
        return formatMoment(self, needString(arg(0), 'format()'));
      case 'relative':
        return relative(self.ms - ctx.nowMs);
      default:
        return wrong();
    }
  }
  if (Array.isArray(self)) {
    switch (name) {
      case 'contains':
        return containsValue(self, arg(0));
      case 'containsAll':
        step(ctx, self.length * node.args.length);
        return node.args.every((_, i) => containsValue(self, arg(i)));
      case 'containsAny':
        step(ctx, self.length * node.args.length);
        return node.args.some((_, i) => containsValue(self, arg(i)));
      case 'filter':
      case 'map': {
        const body = node.args[0];
        if (!body) throw new EvalError(`${name}() needs an expression`);
        const out: Value[] = [];
        self.forEach((value, index) => {
          const v = evaluate(body, row, ctx, { ...locals, value, index });
          if (name === 'map') out.push(v);
          else if (truthy(v)) out.push(value);
        });
        return out;
      }
      case 'reduce': {
        const body = node.args[0];
        if (!body) throw new EvalError('reduce() needs an expression');
        let acc = node.args.length > 1 ? evaluate(node.args[1], row, ctx, locals) : null;
        self.forEach((value, index) => {
          acc = evaluate(body, row, ctx, { ...locals, value, index, acc });
        });
        return acc;
      }
      case 'flat':
        step(ctx, self.length);
        return self.flat() as Value[];
      case 'join':
        step(ctx, self.length);
        return boundedString(ctx, self.map(display).join(node.args.length ? display(arg(0)) : ','));
      case 'reverse':
        return [...self].reverse();
      case 'slice':
        return self.slice(
          needNumber(arg(0), 'slice()', 0),
          node.args.length > 1 ? needNumber(arg(1), 'slice()') : undefined,
        );
      case 'sort':
        step(ctx, self.length * Math.ceil(Math.log2(self.length + 1)));
        return [...self].sort(sortCompare);
      case 'unique': {
        step(ctx, self.length * self.length);
        const out: Value[] = [];
        for (const x of self) if (!out.some((y) => equals(x, y))) out.push(x);
        return out;
      }
      case 'mean':
      case 'median':
      case 'sum':
      case 'min':
      case 'max':
        return numericAggregate(name, self);
      default:
        return wrong();
    }
  }
  if (self instanceof BFile || self instanceof BLink) {
    const rec = self instanceof BFile ? self.rec : self.resolved ? ctx.vault.file(self.resolved) : undefined;
    switch (name) {
      case 'asFile':
        return rec ? new BFile(rec) : null;
      case 'asLink':
        return self instanceof BLink
          ? self
          : new BLink(self.rec.path, node.args.length ? display(arg(0)) : null, self.rec.path);
      case 'linksTo':
      case 'hasLink': {
        if (!rec) return false;
        const target = linkPath(arg(0), row.rec.path, ctx);
        // Embeds count: Obsidian's resolved links hold both.
        const links = [...ctx.vault.links(rec), ...ctx.vault.embeds(rec)];
        step(ctx, links.length);
        return target !== null && links.some((l) => l.resolved === target);
      }
      case 'hasProperty':
        return !!rec?.properties && Object.hasOwn(rec.properties, display(arg(0)));
      case 'hasTag': {
        if (!rec) return false;
        const wanted = node.args.map((_, i) => tagKey(display(arg(i))));
        return rec.tags.some((tag) => wanted.some((w) => tag === w || tag.startsWith(`${w}/`)));
      }
      case 'inFolder': {
        if (!rec) return false;
        const folder = folderOf(arg(0));
        return folder === '' || rec.path.startsWith(`${folder}/`);
      }
      default:
        return wrong();
    }
  }
  if (self instanceof BRegex) {
    if (name !== 'matches') return wrong();
    const s = display(arg(0));
    step(ctx, Math.ceil(s.length / 64));
    self.re.lastIndex = 0;
    return self.re.test(s);
  }
  if (isObject(self)) {
    if (name === 'keys') return Object.keys(self);
    if (name === 'values') return Object.values(self);
    return wrong();
  }
  return wrong();
}

function numericAggregate(name: string, list: readonly Value[]): Value {
  const nums = list.filter((x): x is number => typeof x === 'number');
  if (nums.length === 0) return null;
  switch (name) {
    case 'sum':
      return nums.reduce((a, b) => a + b, 0);
    case 'mean':
      return nums.reduce((a, b) => a + b, 0) / nums.length;
    case 'min':
      return Math.min(...nums);
    case 'max':
      return Math.max(...nums);
    default: {
      const s = [...nums].sort((a, b) => a - b);
      const m = s.length >> 1;
      return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
    }
  }
}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** The Moment.js tokens Obsidian's format() users write most; other letters pass through as written. */
function formatMoment(d: BDate, fmt: string): string {
  const x = new Date(d.ms);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const tokens: Record<string, () => string> = {
    YYYY: () => String(x.getUTCFullYear()),
    YY: () => p(x.getUTCFullYear() % 100),
    MMMM: () => MONTHS[x.getUTCMonth()],
    MMM: () => MONTHS[x.getUTCMonth()].slice(0, 3),
    MM: () => p(x.getUTCMonth() + 1),
    M: () => String(x.getUTCMonth() + 1),
    DD: () => p(x.getUTCDate()),
    D: () => String(x.getUTCDate()),
    dddd: () => WEEKDAYS[x.getUTCDay()],
    ddd: () => WEEKDAYS[x.getUTCDay()].slice(0, 3),
    HH: () => p(x.getUTCHours()),
    H: () => String(x.getUTCHours()),
    mm: () => p(x.getUTCMinutes()),
    ss: () => p(x.getUTCSeconds()),
  };
  return fmt.replace(/\[([^\]]*)\]|YYYY|YY|MMMM|MMM|MM|M|DD|D|dddd|ddd|HH|H|mm|ss/g, (m, lit: string | undefined) =>
    lit !== undefined ? lit : tokens[m](),
  );
}

function relative(deltaMs: number): string {
  const abs = Math.abs(deltaMs);
  const units: [string, number][] = [
    ['year', 365 * DAY],
    ['month', 30 * DAY],
    ['day', DAY],
    ['hour', 3_600_000],
    ['minute', 60_000],
  ];
  for (const [u, size] of units) {
    const n = Math.floor(abs / size);
    if (n >= 1) {
      const s = `${n} ${u}${n > 1 ? 's' : ''}`;
      return deltaMs < 0 ? `${s} ago` : `in ${s}`;
    }
  }
  return 'just now';
}
