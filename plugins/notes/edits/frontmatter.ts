// Structural frontmatter edits that keep every untouched YAML line byte-identical (comments, key order,
// quoting, blank lines) and the body byte-identical. Pure; a defective block is refused, never repaired.
import { Document, isMap, isScalar, isSeq, parseDocument, type Pair } from 'yaml';
import type { JsonValue } from '../../../src/markdown/index.js';
import { refuseOversizedFrontmatter, type EditableNote } from './sections.js';
import { notesRefusals } from '../refusals.js';

export interface FrontmatterEditResult {
  text: string;
  changed: boolean;
  set: string[];
  removed: string[];
  blockRemoved: boolean;
  blockCreated: boolean;
}

/** Type- and order-sensitive equality of two JSON-ish values (`true` is not `1`). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number') return Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));
  if (typeof a !== typeof b) return false;
  if (a === null || b === null || typeof a !== 'object') return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a))
    return a.length === (b as unknown[]).length && a.every((v, i) => sameValue(v, (b as unknown[])[i]));
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  return (
    ka.length === kb.length &&
    ka.every((k, i) => k === kb[i] && sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}

/** `key: value` lines for one pair, as the yaml library writes a fresh mapping. */
export function serializePair(key: string, value: unknown): string {
  return new Document({ [key]: value }).toString({ lineWidth: 0 });
}

interface Span {
  key: string;
  start: number;
  end: number;
}

function lineStart(s: string, i: number): number {
  while (i > 0 && s[i - 1] !== '\n' && s[i - 1] !== '\r') i--;
  return i;
}

function lineEndAfter(s: string, i: number): number {
  if (i > 0 && s[i - 1] === '\n') return i;
  const n = s.indexOf('\n', i);
  return n < 0 ? s.length : n + 1;
}

/** Source spans of each top-level pair (key line through the value's last line, terminator included). */
function pairSpans(yaml: string, items: Pair[]): Span[] | null {
  const out: Span[] = [];
  for (const p of items) {
    if (!isScalar(p.key) || !p.key.range) return null;
    const start = lineStart(yaml, p.key.range[0]);
    const vr = (p.value as { range?: [number, number, number] } | null)?.range;
    const end = lineEndAfter(yaml, vr ? Math.max(vr[2], p.key.range[2]) : p.key.range[2]);
    out.push({ key: String(p.key.value), start, end });
  }
  return out;
}

/**
 * Apply updates (first) then removals (so a key in both is removed). Only an effective change rewrites.
 * Removing the last key removes the block; a note without a block gets one prepended.
 */
export function editFrontmatter(
  note: EditableNote,
  updates: Record<string, JsonValue>,
  remove: string[],
): FrontmatterEditResult {
  const fm = note.model.frontmatter;
  refuseOversizedFrontmatter(note);
  if (fm.error)
    throw notesRefusals.refusal('malformed_frontmatter', {
      path: note.path,
      reason: fm.error.message.slice(0, 200),
      line: fm.error.line,
    });
  const same: FrontmatterEditResult = {
    text: note.text,
    changed: false,
    set: [],
    removed: [],
    blockRemoved: false,
    blockCreated: false,
  };
  const bytes = Buffer.from(note.text, 'utf8');
  const bom = note.text.charCodeAt(0) === 0xfeff ? '\ufeff' : '';

  if (!fm.present) {
    const fresh: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(updates)) if (!remove.includes(k)) fresh[k] = v;
    const keys = Object.keys(fresh);
    if (keys.length === 0) return same;
    const yaml = new Document(fresh).toString({ lineWidth: 0 });
    return {
      ...same,
      text: `${bom}---\n${yaml}---\n${note.text.slice(bom.length)}`,
      changed: true,
      set: keys,
      blockCreated: true,
    };
  }

  const yaml = fm.text;
  const doc = parseDocument(yaml);
  const contents = doc.contents;
  if (contents !== null && !isMap(contents))
    throw notesRefusals.refusal('malformed_frontmatter', { path: note.path, reason: 'the block is not a mapping' });
  const items = contents ? (contents.items as Pair[]) : [];
  const current = (doc.toJS() ?? {}) as Record<string, unknown>;
  const flow = contents !== null && (contents as { flow?: boolean }).flow === true;
  const spans = flow ? null : pairSpans(yaml, items);

  const set: string[] = [];
  const removed: string[] = [];
  for (const [k, v] of Object.entries(updates)) {
    if (remove.includes(k)) continue;
    if (Object.hasOwn(current, k) && sameValue(current[k], v)) continue;
    set.push(k);
  }
  for (const k of remove) if (Object.hasOwn(current, k) && !removed.includes(k)) removed.push(k);
  if (set.length === 0 && removed.length === 0) return same;

  const remaining =
    Object.keys(current).filter((k) => !removed.includes(k)).length + set.filter((k) => !(k in current)).length;
  const body = bytes.subarray(fm.bodyStart).toString('utf8');
  if (remaining === 0) return { ...same, text: bom + body, changed: true, removed, blockRemoved: true };

  let newYaml: string;
  if (spans) {
    // Splice: rewrite only the lines of the pairs we change; everything else keeps its bytes.
    const edits: Array<{ start: number; end: number; text: string }> = [];
    for (const s of spans) {
      if (removed.includes(s.key)) edits.push({ start: s.start, end: s.end, text: '' });
      else if (set.includes(s.key))
        edits.push({ start: s.start, end: s.end, text: serializePair(s.key, updates[s.key]) });
    }
    newYaml = yaml;
    for (const e of edits.sort((a, b) => b.start - a.start))
      newYaml = newYaml.slice(0, e.start) + e.text + newYaml.slice(e.end);
    const added = set.filter((k) => !spans.some((s) => s.key === k));
    if (added.length > 0) {
      if (newYaml.length > 0 && !newYaml.endsWith('\n')) newYaml += '\n';
      for (const k of added) newYaml += serializePair(k, updates[k]);
    }
  } else {
    for (const k of set) doc.set(k, updates[k]);
    for (const k of removed) doc.delete(k);
    newYaml = doc.toString({ lineWidth: 0 });
  }
  const firstBreak = /\r\n|\r|\n/.exec(note.text.slice(bom.length));
  const yamlStartChar = bom.length + (firstBreak ? firstBreak.index + firstBreak[0].length : 0);
  const closeLineStart = yamlStartChar + yaml.length;
  const closeAndBody = note.text.slice(closeLineStart);
  return { ...same, text: note.text.slice(0, yamlStartChar) + newYaml + closeAndBody, changed: true, set, removed };
}

/** Source text for a scalar string in the style the old one was written in (plain when safe, else quoted). */
function styledScalar(value: string, type: string | undefined): string {
  if (type === 'QUOTE_SINGLE') return `'${value.replace(/'/g, "''")}'`;
  if (type === 'QUOTE_DOUBLE' || !/^[\p{L}\p{N}_/][^:#,[\]{}"'\n]*$/u.test(value) || /\s$/.test(value))
    return JSON.stringify(value);
  return value;
}

/**
 * Rewrite string items of one top-level key (a sequence, or a comma/space separated string) in place,
 * touching only the bytes of the changed scalars, so flow/block style, quoting and comments survive.
 * Returns null when the key's value has a shape this cannot edit in place.
 */
export function rewriteStringItems(
  note: EditableNote,
  key: string,
  map: (item: string) => string,
): { text: string; count: number } | null {
  const fm = note.model.frontmatter;
  if (!fm.present || fm.error) return null;
  const doc = parseDocument(fm.text);
  if (!isMap(doc.contents)) return null;
  const pair = (doc.contents.items as Pair[]).find((p) => isScalar(p.key) && String(p.key.value) === key);
  if (!pair) return null;
  const edits: Array<{ start: number; end: number; text: string }> = [];
  const v = pair.value as unknown;
  if (isSeq(v)) {
    for (const item of v.items) {
      if (!isScalar(item) || typeof item.value !== 'string' || !item.range) return null;
      const next = map(item.value);
      if (next !== item.value)
        edits.push({ start: item.range[0], end: item.range[1], text: styledScalar(next, item.type) });
    }
  } else if (isScalar(v) && typeof v.value === 'string' && v.range && (v.type === 'PLAIN' || v.type === undefined)) {
    const src = fm.text.slice(v.range[0], v.range[1]);
    const out = src.replace(/[^,\s]+/g, (tok) => map(tok));
    if (out !== src) edits.push({ start: v.range[0], end: v.range[1], text: out });
  } else return null;
  if (edits.length === 0) return { text: note.text, count: 0 };
  let yaml = fm.text;
  for (const e of edits.sort((a, b) => b.start - a.start)) yaml = yaml.slice(0, e.start) + e.text + yaml.slice(e.end);
  const bom = note.text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const firstBreak = /\r\n|\r|\n/.exec(note.text.slice(bom));
  const yamlStart = bom + (firstBreak ? firstBreak.index + firstBreak[0].length : 0);
  return {
    text: note.text.slice(0, yamlStart) + yaml + note.text.slice(yamlStart + fm.text.length),
    count: edits.length,
  };
}
