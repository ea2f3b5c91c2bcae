// Pure section and body edits over one note's text: full replace keeping the frontmatter block, append,
// find/replace and section-body replace. Never touches the filesystem; refuses instead of guessing.
import type { Heading, NoteModel } from '../../../src/markdown/index.js';
import { resolveSection } from '../../../src/markdown/index.js';
import { Refusal } from '../../../src/sdk/index.js';
import { notesRefusals } from '../refusals.js';

export interface EditableNote {
  path: string;
  text: string;
  model: NoteModel;
}

const enc = (s: string): Buffer => Buffer.from(s, 'utf8');
const endsWithTerminator = (b: Buffer): boolean =>
  b.length > 0 && (b[b.length - 1] === 0x0a || b[b.length - 1] === 0x0d);

/** Full replace: `content` is the new body; a valid line-1 frontmatter block stays byte-identical. */
export function replaceBody(note: EditableNote, content: string, replaceFrontmatter = false): string {
  const fm = note.model.frontmatter;
  // A block too large to parse is still kept: the write path then refuses the result as frontmatter_too_large.
  if (replaceFrontmatter || !fm.present || (fm.error && fm.error.code !== 'too_large')) return content;
  const head = enc(note.text).subarray(0, fm.bodyStart);
  const sep = content.length > 0 && !endsWithTerminator(head) ? '\n' : '';
  return head.toString('utf8') + sep + content;
}

/** Append: the content starts on a new line; no blank line is invented when the note already ends in one. */
export function appendContent(note: EditableNote, content: string): string {
  const t = note.text;
  if (t.length === 0 || /[\r\n]$/.test(t)) return t + content;
  return `${t}\n${content}`;
}

/** Count non-overlapping literal occurrences. */
export function countOccurrences(text: string, find: string, cap = Number.MAX_SAFE_INTEGER): number {
  let n = 0;
  for (let i = text.indexOf(find); i >= 0 && n < cap; i = text.indexOf(find, i + find.length)) n++;
  return n;
}

/** Literal find/replace over the raw file, frontmatter included. */
export function findReplace(
  note: EditableNote,
  find: string,
  replacement: string,
  replaceAll: boolean,
): { text: string; count: number } {
  if (find.length === 0) throw new Refusal('invalid_arguments', { problems: 'find must not be empty' });
  const count = countOccurrences(note.text, find);
  if (count === 0)
    throw notesRefusals.refusal('find_not_found', { path: note.path, head: JSON.stringify(note.text.slice(0, 200)) });
  if (count > 1 && !replaceAll) throw notesRefusals.refusal('find_ambiguous', { path: note.path, count });
  if (!replaceAll) {
    const i = note.text.indexOf(find);
    return { text: note.text.slice(0, i) + replacement + note.text.slice(i + find.length), count: 1 };
  }
  return { text: note.text.split(find).join(replacement), count };
}

/** Resolve a selector or refuse with the candidates (ordinals and lines) as data. */
export function sectionOrRefuse(note: { path: string; model: Pick<NoteModel, 'outline'> }, section: string): Heading {
  const r = resolveSection(note.model, section);
  if (r.ok) return r.heading;
  const list = (hs: Heading[]): string[] =>
    hs.slice(0, 50).map((h) => `#${h.ordinal} ${'#'.repeat(h.depth)} ${h.text} (line ${h.line})`);
  if (r.code === 'section_ambiguous') {
    throw notesRefusals.refusal('section_ambiguous', {
      path: note.path,
      section,
      count: r.candidates.length,
      candidates: r.candidates.map((h) => `#${h.ordinal}`),
      headings: list(r.candidates),
    });
  }
  const candidates = r.candidates.length === 0 ? ['(the note has no ATX headings)'] : list(r.candidates);
  throw notesRefusals.refusal('section_not_found', {
    path: note.path,
    section,
    candidates,
    headingCount: note.model.outline.length,
  });
}

/** Section writes refuse on a defective frontmatter block (the block would be re-attached blindly). */
export function assertFrontmatterSound(note: EditableNote): void {
  const err = note.model.frontmatter.error;
  refuseOversizedFrontmatter(note);
  if (err)
    throw notesRefusals.refusal('malformed_frontmatter', {
      path: note.path,
      reason: err.message.slice(0, 200),
      line: err.line,
    });
}

// `[^]*`, not `(.*)$`: a U+2028 in the line made the failed `$` retry every shorter fence run (quadratic).
/** A block over notes.maxFrontmatterBytes was never parsed, so no edit can be made through it. */
export function refuseOversizedFrontmatter(note: EditableNote): void {
  const err = note.model.frontmatter.error;
  if (err?.code === 'too_large')
    throw new Refusal('frontmatter_too_large', { path: note.path, size: err.bytes, limit: err.limit });
}

const FENCE_OPEN = /^( {0,3})(`{3,}|~{3,})([^]*)/;

/** Line (1-based) of an indented (1–3 spaces) fence opener that is never closed, or null. */
export function unclosedIndentedFence(text: string, fromByte = 0): number | null {
  const start = enc(text).subarray(0, fromByte).toString('utf8').length;
  const lines = text.slice(start).split(/\r\n|\r|\n/);
  const firstLine = text.slice(0, start).split(/\r\n|\r|\n/).length;
  let open: { char: string; len: number; indent: number; line: number } | null = null;
  for (let i = 0; i < lines.length; i++) {
    const m = FENCE_OPEN.exec(lines[i]);
    if (!m) continue;
    if (open) {
      if (m[2][0] === open.char && m[2].length >= open.len && /^[ \t]*$/.test(m[3])) open = null;
      continue;
    }
    if (m[2][0] === '`' && m[3].includes('`')) continue;
    open = { char: m[2][0], len: m[2].length, indent: m[1].length, line: firstLine + i };
  }
  return open && open.indent > 0 ? open.line : null;
}

/** Replace a section's whole body (line after the heading up to the next heading of depth <= it). */
export function replaceSection(
  note: EditableNote,
  section: string,
  content: string,
): { text: string; heading: Heading } {
  assertFrontmatterSound(note);
  const fence = unclosedIndentedFence(note.text, note.model.body.start);
  if (fence !== null) throw notesRefusals.refusal('unclosed_fence', { path: note.path, line: fence });
  const h = sectionOrRefuse(note, section);
  const bytes = enc(note.text);
  const before = bytes.subarray(0, h.bodyStart).toString('utf8');
  const after = bytes.subarray(h.bodyEnd).toString('utf8');
  let body = content;
  if (body.length > 0 && h.bodyStart === h.end) body = `\n${body}`;
  if (body.length > 0 && after.length > 0 && !/[\r\n]$/.test(body)) body = `${body}\n`;
  return { text: before + body + after, heading: h };
}

/** The selected section's body exactly as read_note returns it. */
export function sectionBody(note: EditableNote, h: Heading): string {
  return enc(note.text).subarray(h.bodyStart, h.bodyEnd).toString('utf8');
}
