// What a name reads: a note's property (typed by `.obsidian/types.json` or its shape, converted once per record),
// a file's fields (`file.name`, `file.links`…), a formula's value for a row (computed once per row, cycles an
// error). Pure: the vault comes in as the context's lookup.
import { DAY, type EvalContext, EvalError, IN_PROGRESS, Namespace, type Row, type Scoped, step } from './runtime.js';
import {
  BDate,
  BDuration,
  BFile,
  BLink,
  type FileRecord,
  isObject,
  parseDate,
  setOwn,
  typeOf,
  type Value,
} from './values.js';

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

/** A property of a note (null when the record is missing, has no properties or not this one). */
export function property(rec: FileRecord | null, name: string, ctx: EvalContext): Value {
  if (!rec?.properties || !Object.hasOwn(rec.properties, name)) return null;
  return noteProperty(rec, name, ctx);
}

/** A property of the row's own note: as property(), with the record's memo found once per row. */
export function rowProperty(row: Row, name: string, ctx: EvalContext): Value {
  const props = row.rec.properties;
  if (!props || !Object.hasOwn(props, name)) return null;
  if (row.memo === undefined) row.memo = ctx.vault.memo?.(row.rec) ?? null;
  return converted(row.rec, name, row.memo, ctx);
}

/**
 * A note's property as a typed value, converted once per record while the vault's files and property types are
 * unchanged (the lookup's memo; values are never changed in place, so a memoised one is shared safely).
 */
export function noteProperty(rec: FileRecord, name: string, ctx: EvalContext): Value {
  return converted(rec, name, ctx.vault.memo?.(rec) ?? null, ctx);
}

function converted(rec: FileRecord, name: string, memo: Map<string, Value> | null, ctx: EvalContext): Value {
  if (memo) {
    const held = memo.get(name);
    if (held !== undefined || memo.has(name)) return held as Value;
  }
  const v = propertyValue(rec.properties![name], ctx.vault.propertyType(name), rec, ctx);
  memo?.set(name, v);
  return v;
}

/** A formula's value for a row (once per row; a cycle at run time is an error, though compile refuses them first). */
export function formulaValue(name: string, row: Row, ctx: EvalContext): Value {
  const f = ctx.formulas.get(name);
  if (!f) return null;
  const slots = (row.formulas ??= new Array(ctx.formulas.size));
  const held = slots[f.slot];
  if (held === IN_PROGRESS) throw new EvalError(`the formula "${name}" refers to itself`);
  if (held instanceof EvalError) throw held;
  if (held !== undefined) return held;
  slots[f.slot] = IN_PROGRESS;
  try {
    const v = f.ev(row, ctx, undefined);
    slots[f.slot] = v;
    return v;
  } catch (e) {
    slots[f.slot] = e instanceof EvalError ? e : undefined;
    throw e;
  }
}

const DATE_FIELDS: Readonly<Record<string, (d: Date) => number>> = {
  year: (d) => d.getUTCFullYear(),
  month: (d) => d.getUTCMonth() + 1,
  day: (d) => d.getUTCDate(),
  hour: (d) => d.getUTCHours(),
  minute: (d) => d.getUTCMinutes(),
  second: (d) => d.getUTCSeconds(),
  millisecond: (d) => d.getUTCMilliseconds(),
};

const DURATION_UNITS: Readonly<Record<string, number>> = {
  days: DAY,
  hours: 3_600_000,
  minutes: 60_000,
  seconds: 1000,
  milliseconds: 1,
};

/** `x.name` for any x: a namespace's member, a file's (or a link's file's) field, a date's or duration's part. */
export function member(obj: Scoped, name: string, row: Row, ctx: EvalContext): Scoped {
  if (obj instanceof Namespace) {
    if (obj.kind === 'note') return obj.rec === row.rec ? rowProperty(row, name, ctx) : property(obj.rec, name, ctx);
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
    if (Object.hasOwn(DATE_FIELDS, name)) return DATE_FIELDS[name](new Date(v.ms));
    throw new EvalError(`a date has no field "${name}"`);
  }
  if (v instanceof BDuration) {
    if (Object.hasOwn(DURATION_UNITS, name)) return Math.trunc(v.ms / DURATION_UNITS[name]);
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

export function fileField(rec: FileRecord, name: string, ctx: EvalContext): Value {
  switch (name) {
    case 'name':
      return rec.path.slice(rec.path.lastIndexOf('/') + 1);
    case 'basename': {
      const fileName = rec.path.slice(rec.path.lastIndexOf('/') + 1);
      const dot = fileName.lastIndexOf('.');
      return dot > 0 ? fileName.slice(0, dot) : fileName;
    }
    case 'path':
      return rec.path;
    case 'folder': {
      const slash = rec.path.lastIndexOf('/');
      return slash < 0 ? '/' : rec.path.slice(0, slash);
    }
    case 'ext': {
      const fileName = rec.path.slice(rec.path.lastIndexOf('/') + 1);
      const dot = fileName.lastIndexOf('.');
      return dot > 0 ? fileName.slice(dot + 1) : '';
    }
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
