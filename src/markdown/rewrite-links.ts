// Link rewriting after a file moves (note or attachment), as Obsidian does with "automatically update
// internal links" on and "shortest path when possible": only the target text of each link that resolved
// to the moved file changes. Pure: texts and LinkIndexes in, new texts out; never rewrites a link it cannot prove.
import { dirname, orderCandidates, resolveLink, type LinkIndex, type LinkResolution } from './resolve-link.js';
import type { Link, NoteModel } from './types.js';

export interface SourceNote {
  path: string;
  text: string;
  model: NoteModel;
}
export interface RewritePlan {
  path: string;
  text: string;
  count: number;
}

/**
 * A link the move did not rewrite and the caller should see: one that could mean the moved file but is
 * ambiguous (with every candidate), dangling, or inside code; or one to another file whose meaning the move
 * changed (`changed_by_move`, e.g. it now finds two files of the new name).
 */
export interface LeftAlone {
  path: string;
  line: number;
  raw: string;
  reason: 'ambiguous' | 'dangling' | 'code' | 'changed_by_move' | 'unrewritable';
  candidates?: string[];
}

export interface MovePlan {
  plans: RewritePlan[];
  leftAlone: LeftAlone[];
  total: number;
  /** Set when the move must not happen (a note over the rewrite cap, overlapping links). */
  problem?: string;
}

const isNote = (p: string): boolean => /\.md$/i.test(p);
const baseName = (p: string): string => p.slice(p.lastIndexOf('/') + 1);
const RAW_MAX = 200;

/** How a link refers to a file: what callers search note texts for before parsing them (lower-cased). */
export function linkNameKey(pathOrTarget: string): string {
  const name = baseName(pathOrTarget.trim().replace(/\\/g, '/')).toLowerCase();
  return name.endsWith('.md') ? name.slice(0, -3) : name;
}

/** Relative path from folder `fromDir` to vault path `to`. */
export function relativePath(fromDir: string, to: string): string {
  const a = fromDir === '' ? [] : fromDir.split('/');
  const b = to.split('/');
  let i = 0;
  while (i < a.length && i < b.length - 1 && a[i] === b[i]) i++;
  return [...a.slice(i).map(() => '..'), ...b.slice(i)].join('/');
}

/** The written target of a link's raw text: its UTF-16 range inside `raw`, and whether it is angle-bracketed. */
function targetSpan(link: Link): { start: number; end: number; angle: boolean } | null {
  const raw = link.raw;
  if (link.kind === 'markdown') {
    const open = raw.lastIndexOf('](');
    if (open < 0 || !raw.endsWith(')')) return null;
    let s = open + 2;
    while (raw[s] === ' ' || raw[s] === '\t') s++;
    if (raw[s] === '<') {
      const close = raw.indexOf('>', s);
      if (close < 0) return null;
      const hash = raw.indexOf('#', s);
      return { start: s + 1, end: hash >= 0 && hash < close ? hash : close, angle: true };
    }
    let e = s;
    let depth = 0;
    for (; e < raw.length - 1; e++) {
      const c = raw[e];
      if (c === '\\') {
        e++;
        continue;
      }
      if (c === '(') depth++;
      else if (c === ')') {
        if (depth === 0) break;
        depth--;
      } else if (c === '#' || /\s/.test(c)) break;
    }
    return { start: s, end: e, angle: false };
  }
  const start = raw.indexOf('[[') + 2;
  const close = raw.lastIndexOf(']]');
  if (start < 2 || close < start) return null;
  let end = close;
  const pipe = raw.indexOf('|', start);
  if (pipe >= 0 && pipe < end) end = raw[pipe - 1] === '\\' ? pipe - 1 : pipe; // `\|` in a table: the `\` stays
  const hash = raw.indexOf('#', start);
  if (hash >= 0 && hash < end) end = hash;
  let s = start;
  while (s < end && /\s/.test(raw[s])) s++;
  while (end > s && /\s/.test(raw[end - 1])) end--;
  return { start: s, end, angle: false };
}

/** Percent-encode a path for a markdown link the way `original` was written (spaces always). */
function encodeHref(path: string, original: string): string {
  const keepNonAscii = /[^\x00-\x7f]/.test(original);
  return path.replace(/[\s%()<>#?^|[\]\\\u0000-\u001f]|[^\x00-\x7f]+/g, (c) =>
    keepNonAscii && /^[^\x00-\x7f]+$/.test(c) ? c : encodeURIComponent(c),
  );
}

/** The forms a rewritten target can take, most like the original first. */
function targetForms(written: string, via: LinkResolution['via'], to: string, srcNew: string): string[] {
  const keepMd = isNote(to) && /\.md$/i.test(written);
  const shape = (p: string): string => (isNote(to) && !keepMd ? p.replace(/\.md$/i, '') : p);
  const full = shape(to);
  const forms: string[] = [];
  switch (via) {
    case 'name':
      forms.push(shape(baseName(to)));
      break;
    case 'path':
      forms.push(written.startsWith('/') ? `/${full}` : full);
      break;
    case 'relative': {
      const rel = shape(relativePath(dirname(srcNew), to));
      forms.push(written.startsWith('./') && !rel.startsWith('../') ? `./${rel}` : rel);
      break;
    }
    case 'suffix': {
      const depth = written.replace(/^\/+|\/+$/g, '').split('/').length;
      forms.push(full.split('/').slice(-depth).join('/'));
      break;
    }
    default:
      break;
  }
  forms.push(full);
  return [...new Set(forms)];
}

/** New raw text for one link so it resolves to `wanted` from `srcNew`, or null when no form does. */
function rewriteLink(
  link: Link,
  via: LinkResolution['via'],
  wanted: string,
  srcNew: string,
  post: LinkIndex,
): string | null {
  const span = targetSpan(link);
  if (span === null) return null;
  const raw = link.raw;
  const writtenRaw = raw.slice(span.start, span.end);
  const written = link.kind === 'markdown' ? link.target : writtenRaw;
  for (const form of targetForms(written, via, wanted, srcNew)) {
    const check = resolveLink(form, srcNew, post);
    if (check.resolved !== wanted) continue;
    const text = link.kind === 'markdown' && !span.angle ? encodeHref(form, writtenRaw) : form;
    if (link.kind !== 'markdown' && /[|#\][]/.test(text)) continue;
    return raw.slice(0, span.start) + text + raw.slice(span.end);
  }
  return null;
}

const WIKI_TEXT = /!?\[\[([^\]\r\n]{1,1000})\]\]/g;
const MD_TEXT = /!?\[[^\]\r\n]{0,1000}\]\(\s*<?([^)>\s]{1,1000})/g;

/** Link-shaped text naming `key` that the parser did not take as a link (code, comments, math, frontmatter text). */
function inertMentions(src: SourceNote, key: string): LeftAlone[] {
  const slot = (line: number, kind: string, embed: boolean): string => `${line}|${kind}|${embed}`;
  const parsed = new Map<string, number>();
  for (const l of src.model.links) {
    if (linkNameKey(l.target) !== key) continue;
    const k = slot(l.line, l.kind === 'markdown' ? 'md' : 'wiki', l.embed);
    parsed.set(k, (parsed.get(k) ?? 0) + 1);
  }
  const out: LeftAlone[] = [];
  const scan = (re: RegExp, kind: string, targetOf: (m: RegExpExecArray) => string | null): void => {
    for (const m of src.text.matchAll(new RegExp(re.source, 'g'))) {
      const target = targetOf(m);
      if (target === null || linkNameKey(target) !== key) continue;
      const line = src.text.slice(0, m.index).split('\n').length;
      const k = slot(line, kind, m[0].startsWith('!'));
      const seen = parsed.get(k) ?? 0;
      if (seen > 0) {
        parsed.set(k, seen - 1);
        continue;
      }
      out.push({ path: src.path, line, raw: m[0].slice(0, RAW_MAX), reason: 'code' });
    }
  };
  scan(WIKI_TEXT, 'wiki', (m) => m[1].split('|')[0].split('#')[0].replace(/\\$/, ''));
  scan(MD_TEXT, 'md', (m) => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(m[1]) || m[1].startsWith('#')) return null;
    try {
      return decodeURIComponent(m[1].split('#')[0]);
    } catch {
      return m[1];
    }
  });
  return out;
}

/**
 * Plan every rewrite for moving `from` to `to`. `pre` and `post` index every vault file before and after the
 * move; `sources` are the notes to look at (the moved note itself, when it is one, under its old path).
 * Links that resolved to `from` get a new target resolving to `to`; the moved note's own links are re-aimed
 * from its new folder; every other byte of every note stays as it was.
 */
export function planLinkRewrites(
  from: string,
  to: string,
  sources: readonly SourceNote[],
  pre: LinkIndex,
  post: LinkIndex,
  maxPerNote: number,
): MovePlan {
  const plans: RewritePlan[] = [];
  const leftAlone: LeftAlone[] = [];
  const key = linkNameKey(from);
  let total = 0;
  for (const src of sources) {
    const srcNew = src.path === from ? to : src.path;
    const edits: Array<{ start: number; end: number; text: string }> = [];
    for (const link of src.model.links) {
      if (link.target === '') continue; // `[[#heading]]` stays in the same note wherever it goes
      const r = resolveLink(link.target, src.path, pre);
      const note = (reason: LeftAlone['reason'], candidates?: string[]): void => {
        leftAlone.push({
          path: srcNew,
          line: link.line,
          raw: link.raw.slice(0, RAW_MAX),
          reason,
          ...(candidates ? { candidates } : {}),
        });
      };
      if (r.ambiguous) {
        if (r.candidates.includes(from))
          note(
            'ambiguous',
            orderCandidates(
              r.candidates.map((c) => (c === from ? to : c)),
              dirname(srcNew),
            ),
          );
        continue;
      }
      if (r.resolved === null) {
        if (linkNameKey(link.target) === key) note('dangling');
        continue;
      }
      const wanted = r.resolved === from ? to : r.resolved;
      const after = resolveLink(link.target, srcNew, post);
      if (after.resolved === wanted) continue;
      if (r.resolved !== from && src.path !== from) {
        note('changed_by_move', after.candidates);
        continue;
      }
      const text = rewriteLink(link, r.via, wanted, srcNew, post);
      if (text === null) {
        note('unrewritable');
        continue;
      }
      if (text !== link.raw) edits.push({ start: link.start, end: link.end, text });
    }
    leftAlone.push(...inertMentions(src, key).map((l) => ({ ...l, path: srcNew })));
    if (edits.length === 0) continue;
    if (edits.length > maxPerNote)
      return {
        plans: [],
        leftAlone,
        total: 0,
        problem: `${src.path} would need ${edits.length} rewrites, over the per-note limit (${maxPerNote})`,
      };
    edits.sort((a, b) => a.start - b.start);
    for (let i = 1; i < edits.length; i++) {
      if (edits[i].start < edits[i - 1].end)
        return { plans: [], leftAlone, total: 0, problem: `two links overlap in ${src.path}` };
    }
    const bytes = Buffer.from(src.text, 'utf8');
    const parts: Buffer[] = [];
    let at = 0;
    for (const e of edits) {
      parts.push(bytes.subarray(at, e.start), Buffer.from(e.text, 'utf8'));
      at = e.end;
    }
    parts.push(bytes.subarray(at));
    plans.push({ path: src.path, text: Buffer.concat(parts).toString('utf8'), count: edits.length });
    total += edits.length;
  }
  return { plans, leftAlone, total };
}
