// Frontmatter: finds the `---` block on line 1, parses it with `yaml` (aliases bounded) into a JSON view.
// Never throws and never drops the body: every defect becomes a typed FrontmatterError.
import { isScalar, visit, type Document } from 'yaml';
import type { FrontmatterError, JsonValue } from './types.js';
import type { SourceText } from './source-text.js';
import { parseDocumentBounded } from './yaml-bounded.js';

/** Most alias dereferences one frontmatter block may make before it is refused (billion-laughs guard). */
export const FRONTMATTER_MAX_ALIAS_COUNT = 100;
/**
 * Deepest nesting of collections one frontmatter block may have (the JSON view is cut at the same depth).
 * A deeper block is never composed (see yaml-bounded.ts: yaml's recursion near the stack limit can end the
 * process), and is kept as raw text with a `too_deep` error.
 */
export const FRONTMATTER_MAX_DEPTH = 64;
/**
 * Largest frontmatter block parsed by default (UTF-8 bytes of its YAML). Parsing is linear, about 1 ms per
 * KiB on a busy two-core machine, so this bounds one block at tens of milliseconds; a larger block is kept
 * as raw text with a `too_large` error, never parsed.
 */
export const DEFAULT_MAX_FRONTMATTER_BYTES = 64 * 1024;

export interface FrontmatterScan {
  present: boolean;
  text: string;
  data: { [key: string]: JsonValue } | null;
  error?: FrontmatterError;
  /** UTF-16 index of the first body character. */
  bodyStartIndex: number;
  /** UTF-16 range of the YAML source (empty when absent). */
  yamlStart: number;
  yamlEnd: number;
}

const FENCE = /^---[ \t]*$/;

export function scanFrontmatter(src: SourceText, maxBytes = DEFAULT_MAX_FRONTMATTER_BYTES): FrontmatterScan {
  const text = src.text;
  const bom = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const absent: FrontmatterScan = {
    present: false,
    text: '',
    data: null,
    bodyStartIndex: bom,
    yamlStart: bom,
    yamlEnd: bom,
  };
  if (src.lineCount < 2 || !FENCE.test(src.lineText(0).slice(bom))) return absent;
  for (let i = 1; i < src.lineCount; i++) {
    if (!FENCE.test(src.lineText(i))) continue;
    const yamlStart = src.lineStarts[1];
    const yamlEnd = src.lineStarts[i];
    const bodyStartIndex = i + 1 < src.lineCount ? src.lineStarts[i + 1] : text.length;
    const yaml = text.slice(yamlStart, yamlEnd);
    const bytes = src.byte(yamlEnd) - src.byte(yamlStart);
    if (bytes > maxBytes) {
      const error: FrontmatterError = {
        code: 'too_large',
        message: `frontmatter block is ${bytes} bytes, over the ${maxBytes}-byte limit; it is kept as raw text and not parsed`,
        line: 1,
        bytes,
        limit: maxBytes,
      };
      return { present: true, text: yaml, data: null, error, bodyStartIndex, yamlStart, yamlEnd };
    }
    return { present: true, text: yaml, bodyStartIndex, yamlStart, yamlEnd, ...parseYamlMapping(yaml, 2) };
  }
  return {
    ...absent,
    error: {
      code: 'unclosed_fence',
      message: 'frontmatter opened with --- on line 1 is never closed; the whole file is treated as body',
      line: 1,
    },
  };
}

/**
 * UTF-8 bytes of the YAML in a note's closed line-1 frontmatter block (0 when there is none): the size the
 * write path compares with its limit, without parsing anything. Finds the block as scanFrontmatter does.
 */
export function frontmatterBlockBytes(text: string): number {
  const bom = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const lineEnd = (from: number): number => {
    let i = from;
    while (i < text.length && text.charCodeAt(i) !== 10 && text.charCodeAt(i) !== 13) i++;
    return i;
  };
  const nextLine = (end: number): number =>
    text.charCodeAt(end) === 13 && text.charCodeAt(end + 1) === 10 ? end + 2 : end + 1;
  const firstEnd = lineEnd(bom);
  if (firstEnd >= text.length || !FENCE.test(text.slice(bom, firstEnd))) return 0;
  const yamlStart = nextLine(firstEnd);
  for (let start = yamlStart; start <= text.length; ) {
    const end = lineEnd(start);
    if (FENCE.test(text.slice(start, end))) return utf8Length(text, yamlStart, start);
    if (end >= text.length) return 0;
    start = nextLine(end);
  }
  return 0;
}

function utf8Length(text: string, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < end && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

type YamlResult = { data: { [key: string]: JsonValue } | null; error?: FrontmatterError };

// Recently parsed frontmatter blocks: a note edited in its body (an append, a section edit) keeps its
// frontmatter, and parsing it again with `yaml` was the largest part of re-parsing a small note. Hits are
// returned as copies, so no caller can change a cached result. Per thread; bounded in entries and size.
const CACHE_ENTRIES = 512;
const CACHE_MAX_CHARS = 16 * 1024;
const cache = new Map<string, YamlResult>();

/** Parse YAML source into a JSON-safe mapping; `firstLine` is the file line of the YAML's first line. */
export function parseYamlMapping(yaml: string, firstLine: number): YamlResult {
  if (yaml.length > CACHE_MAX_CHARS) return parseYamlUncached(yaml, firstLine);
  const key = `${firstLine}:${yaml}`;
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return structuredClone(hit);
  }
  const result = parseYamlUncached(yaml, firstLine);
  cache.set(key, structuredClone(result));
  if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  return result;
}

function parseYamlUncached(yaml: string, firstLine: number): YamlResult {
  let doc;
  try {
    // uniqueKeys off: yaml compares each new key with every earlier one (quadratic: 20,000 keys took 9 s);
    // duplicates are found below with one Set per mapping instead.
    const parsed = parseDocumentBounded(yaml, FRONTMATTER_MAX_DEPTH, { prettyErrors: false, uniqueKeys: false });
    if (!parsed.ok)
      return {
        data: null,
        error: {
          code: 'too_deep',
          message: `frontmatter nests deeper than ${FRONTMATTER_MAX_DEPTH} levels; it is kept as raw text and not parsed`,
          line: lineAt(yaml, parsed.offset) + firstLine - 1,
          limit: FRONTMATTER_MAX_DEPTH,
        },
      };
    doc = parsed.doc;
  } catch (e) {
    return { data: null, error: { code: 'malformed_yaml', message: errorMessage(e) } };
  }
  if (doc.errors.length === 0) {
    const dup = firstDuplicateKey(doc);
    if (dup !== null)
      return {
        data: null,
        error: { code: 'malformed_yaml', message: 'Map keys must be unique', line: lineAt(yaml, dup) + firstLine - 1 },
      };
  }
  if (doc.errors.length > 0) {
    const err = doc.errors[0];
    const line = err.linePos?.[0]?.line;
    return {
      data: null,
      error: {
        code: 'malformed_yaml',
        message: oneLine(err.message),
        ...(line !== undefined ? { line: line + firstLine - 1 } : {}),
      },
    };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: FRONTMATTER_MAX_ALIAS_COUNT, mapAsMap: true });
  } catch (e) {
    const message = errorMessage(e);
    if (/alias/i.test(message)) return { data: null, error: { code: 'alias_limit', message } };
    return { data: null, error: { code: 'malformed_yaml', message } };
  }
  if (value === null || value === undefined) return { data: {} };
  if (typeof value !== 'object' || Array.isArray(value)) {
    return {
      data: null,
      error: {
        code: 'not_a_mapping',
        message: `frontmatter is a ${Array.isArray(value) ? 'sequence' : typeof value}, not a mapping`,
        line: firstLine,
      },
    };
  }
  const json = toJson(value, 0);
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return { data: {} };
  return { data: json };
}

/**
 * Offset of the first key that repeats an earlier key of the same mapping, or null. Keys are equal as yaml's
 * own check has them: scalars with strictly equal values (so `1` and `"1"` differ); other keys never are.
 */
function firstDuplicateKey(doc: Document): number | null {
  let found: number | null = null;
  visit(doc, {
    Map(_key, map) {
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        const k = pair.key;
        if (!isScalar(k) || (typeof k.value === 'number' && Number.isNaN(k.value))) continue;
        if (seen.has(k.value)) {
          found = k.range?.[0] ?? 0;
          return visit.BREAK;
        }
        seen.add(k.value);
      }
      return undefined;
    },
  });
  return found;
}

/** 1-based line of a UTF-16 offset. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** The JSON view: Dates become ISO strings, non-finite numbers strings, Maps objects; depth-bounded. */
function toJson(value: unknown, depth: number): JsonValue {
  if (depth > FRONTMATTER_MAX_DEPTH) return null;
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (Array.isArray(value)) return value.map((v) => toJson(v, depth + 1));
  if (value instanceof Set) return [...value].map((v) => toJson(v, depth + 1));
  if (value instanceof Map) {
    const out: { [key: string]: JsonValue } = {};
    for (const [k, v] of value) setOwn(out, String(k), toJson(v, depth + 1));
    return out;
  }
  if (ArrayBuffer.isView(value)) return null;
  if (typeof value === 'object') {
    const out: { [key: string]: JsonValue } = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) setOwn(out, k, toJson(v, depth + 1));
    return out;
  }
  return null;
}

/** Assign as an own property, so a YAML key `__proto__` is data and never a prototype. */
function setOwn(out: { [key: string]: JsonValue }, key: string, value: JsonValue): void {
  if (key === '__proto__')
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

function errorMessage(e: unknown): string {
  return oneLine(e instanceof Error ? e.message : String(e));
}

function oneLine(s: string): string {
  return s.split(/\r?\n/)[0].slice(0, 300);
}

/** Frontmatter `aliases`/`alias`: a list, or a comma-separated string. */
export function aliasesFrom(data: { [key: string]: JsonValue } | null): string[] {
  if (!data) return [];
  const out: string[] = [];
  for (const key of ['aliases', 'alias']) {
    const v = data[key];
    const items = Array.isArray(v) ? v : typeof v === 'string' ? v.split(',') : typeof v === 'number' ? [v] : [];
    for (const item of items) {
      if (typeof item !== 'string' && typeof item !== 'number') continue;
      const s = String(item).trim();
      if (s !== '' && !out.includes(s)) out.push(s);
    }
  }
  return out;
}

/** Frontmatter `title` when it is a non-empty string. */
export function titleFrom(data: { [key: string]: JsonValue } | null): string | null {
  const v = data?.title;
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : null;
}
