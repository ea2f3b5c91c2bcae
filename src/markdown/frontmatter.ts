// Frontmatter: finds the `---` block on line 1, parses it with `yaml` (aliases bounded) into a JSON view.
// Never throws and never drops the body: every defect becomes a typed FrontmatterError.
import { parseDocument } from 'yaml';
import type { FrontmatterError, JsonValue } from './types.js';
import type { SourceText } from './source-text.js';

/** Most alias dereferences one frontmatter block may make before it is refused (billion-laughs guard). */
export const FRONTMATTER_MAX_ALIAS_COUNT = 100;

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

export function scanFrontmatter(src: SourceText): FrontmatterScan {
  const text = src.text;
  const bom = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const absent: FrontmatterScan = { present: false, text: '', data: null, bodyStartIndex: bom, yamlStart: bom, yamlEnd: bom };
  if (src.lineCount < 2 || !FENCE.test(src.lineText(0).slice(bom))) return absent;
  for (let i = 1; i < src.lineCount; i++) {
    if (!FENCE.test(src.lineText(i))) continue;
    const yamlStart = src.lineStarts[1];
    const yamlEnd = src.lineStarts[i];
    const bodyStartIndex = i + 1 < src.lineCount ? src.lineStarts[i + 1] : text.length;
    const yaml = text.slice(yamlStart, yamlEnd);
    return { present: true, text: yaml, bodyStartIndex, yamlStart, yamlEnd, ...parseYamlMapping(yaml, 2) };
  }
  return {
    ...absent,
    error: { code: 'unclosed_fence', message: 'frontmatter opened with --- on line 1 is never closed; the whole file is treated as body', line: 1 },
  };
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
    doc = parseDocument(yaml, { prettyErrors: false });
  } catch (e) {
    return { data: null, error: { code: 'malformed_yaml', message: errorMessage(e) } };
  }
  if (doc.errors.length > 0) {
    const err = doc.errors[0];
    const line = err.linePos?.[0]?.line;
    return {
      data: null,
      error: { code: 'malformed_yaml', message: oneLine(err.message), ...(line !== undefined ? { line: line + firstLine - 1 } : {}) },
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
    return { data: null, error: { code: 'not_a_mapping', message: `frontmatter is a ${Array.isArray(value) ? 'sequence' : typeof value}, not a mapping`, line: firstLine } };
  }
  const json = toJson(value, 0);
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return { data: {} };
  return { data: json };
}

/** The JSON view: Dates become ISO strings, non-finite numbers strings, Maps objects; depth-bounded. */
function toJson(value: unknown, depth: number): JsonValue {
  if (depth > 64) return null;
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
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
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
