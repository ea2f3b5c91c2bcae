// Reading a base: the YAML of a `.base` file or a ```base block into a checked definition (filters, formulas,
// properties, summaries, views), and finding the ```base blocks of a note. Pure: text in, definition or refusal out.
import { parse as parseYaml } from 'yaml';
import { basesRefusals } from './refusals.js';

export type FilterTree =
  | string
  | { readonly and: readonly FilterTree[] }
  | { readonly or: readonly FilterTree[] }
  | { readonly not: readonly FilterTree[] };

export interface SortKey {
  readonly property: string;
  readonly direction: 'ASC' | 'DESC';
}

export interface ViewDef {
  readonly type: string;
  readonly name: string;
  readonly filters: FilterTree | null;
  readonly order: readonly string[];
  readonly sort: readonly SortKey[];
  readonly groupBy: SortKey | null;
  readonly limit: number | null;
  /** Property id → summary name (built-in, or a key of the base's `summaries`). */
  readonly summaries: Readonly<Record<string, string>>;
}

export interface BaseDef {
  readonly filters: FilterTree | null;
  readonly formulas: Readonly<Record<string, string>>;
  readonly displayNames: Readonly<Record<string, string>>;
  readonly summaries: Readonly<Record<string, string>>;
  readonly views: readonly ViewDef[];
}

/** View types whose rows are a list of files (what this engine answers); others are refused when queried. */
export const ROW_VIEW_TYPES = new Set(['table', 'cards', 'list']);

const invalid = (problem: string): never => basesRefusals.refuse('bases_invalid', { problem });

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function filterTree(v: unknown, where: string, depth = 0): FilterTree | null {
  if (v === undefined || v === null) return null;
  if (depth > 32) invalid(`${where} nest and/or/not deeper than 32`);
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (!isRecord(v)) return invalid(`${where} must be an expression string or an and/or/not list`);
  const keys = Object.keys(v);
  if (keys.length !== 1 || !['and', 'or', 'not'].includes(keys[0]))
    return invalid(`${where} must have exactly one key, and, or or not (found ${keys.join(', ') || 'none'})`);
  const list = v[keys[0]];
  if (!Array.isArray(list)) return invalid(`${where}.${keys[0]} must be a list`);
  const items = list.map((x, i) => filterTree(x, `${where}.${keys[0]}[${i}]`, depth + 1)).filter((x) => x !== null);
  return { [keys[0]]: items } as unknown as FilterTree;
}

function sortKey(v: unknown, where: string): SortKey {
  if (typeof v === 'string') return { property: v, direction: 'ASC' };
  if (!isRecord(v)) return invalid(`${where} must name a property`);
  const property = v.property ?? v.column;
  if (typeof property !== 'string' || property === '') return invalid(`${where} must name a property`);
  const dir = String(v.direction ?? 'ASC').toUpperCase();
  if (dir !== 'ASC' && dir !== 'DESC') return invalid(`${where}.direction must be ASC or DESC`);
  return { property, direction: dir };
}

/** A map with no prototype: a key like `constructor` or `__proto__` in a base is only ever its own entry. */
function ownMap(): Record<string, string> {
  return Object.create(null) as Record<string, string>;
}

function setKey(o: Record<string, string>, k: string, v: string): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

function stringMap(v: unknown, where: string): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isRecord(v)) return invalid(`${where} must be a mapping`);
  const out = ownMap();
  for (const [k, x] of Object.entries(v)) {
    if (typeof x === 'number' || typeof x === 'boolean') setKey(out, k, String(x));
    else if (typeof x === 'string') setKey(out, k, x);
    else invalid(`${where}.${k} must be a string`);
  }
  return out;
}

/** Parse and check a base's YAML. `maxBytes` bounds the text before YAML sees it. */
export function parseBase(text: string, maxBytes: number): BaseDef {
  if (Buffer.byteLength(text, 'utf8') > maxBytes)
    basesRefusals.refuse('bases_too_complex', {
      problem: `a base of more than ${maxBytes} bytes`,
      setting: 'bases.maxBaseBytes',
    });
  let doc: unknown;
  try {
    doc = parseYaml(text, { maxAliasCount: 100, uniqueKeys: false });
  } catch (e) {
    return invalid(`its YAML does not parse: ${(e as Error).message.split('\n')[0]}`);
  }
  if (doc === null || doc === undefined) doc = {};
  if (!isRecord(doc)) return invalid('it must be a YAML mapping');
  const displayNames = ownMap();
  if (doc.properties !== undefined && doc.properties !== null) {
    if (!isRecord(doc.properties)) invalid('properties must be a mapping');
    for (const [k, x] of Object.entries(doc.properties as Record<string, unknown>))
      if (isRecord(x) && typeof x.displayName === 'string') setKey(displayNames, k, x.displayName);
  }
  const rawViews = doc.views ?? [];
  if (!Array.isArray(rawViews)) return invalid('views must be a list');
  const views = rawViews.map((v, i): ViewDef => {
    const where = `views[${i}]`;
    if (!isRecord(v)) return invalid(`${where} must be a mapping`);
    const limit = v.limit;
    if (limit !== undefined && limit !== null && (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 0))
      invalid(`${where}.limit must be a whole number`);
    const order = v.order ?? [];
    if (!Array.isArray(order) || order.some((x) => typeof x !== 'string'))
      invalid(`${where}.order must be a list of property names`);
    const sort = v.sort ?? [];
    if (!Array.isArray(sort)) invalid(`${where}.sort must be a list`);
    return {
      type: typeof v.type === 'string' ? v.type : 'table',
      name: typeof v.name === 'string' ? v.name : String(v.name ?? `View ${i + 1}`),
      filters: filterTree(v.filters, `${where}.filters`),
      order: order as string[],
      sort: (sort as unknown[]).map((s, j) => sortKey(s, `${where}.sort[${j}]`)),
      groupBy: v.groupBy === undefined || v.groupBy === null ? null : sortKey(v.groupBy, `${where}.groupBy`),
      limit: typeof limit === 'number' ? limit : null,
      summaries: stringMap(v.summaries, `${where}.summaries`),
    };
  });
  return {
    filters: filterTree(doc.filters, 'filters'),
    formulas: stringMap(doc.formulas, 'formulas'),
    displayNames,
    summaries: stringMap(doc.summaries, 'summaries'),
    views,
  };
}

export { type BaseBlock, baseBlocks } from '../../src/markdown/index.js';
