// Block structure of a note body from micromark's CommonMark events: code, raw HTML and top-level ATX headings.
// Never builds or recurses over a tree, and never lets a pathological note reach micromark: see line-scanner.ts.
import { parse, postprocess, preprocess } from 'micromark';
import type { Event } from 'micromark-util-types';
import type { Range, SourceText } from './source-text.js';
import { scanStructureByLines, atxHeading, blockSegments } from './line-scanner.js';

/** Container nesting (blockquote `>` plus list levels) above which micromark is not trusted with the note. */
export const MAX_MICROMARK_NESTING = 100;
/** Longest run of `*` or `_` micromark is given: its emphasis matching is quadratic in the run length. */
export const MAX_DELIMITER_RUN = 256;
/** Notes longer than this (UTF-16 units) skip micromark: at its speed a multi-megabyte note costs seconds. */
export const MAX_MICROMARK_CHARS = 2_000_000;
/** micromark's cost grows faster than linearly with input, so bodies are parsed in runs of about this size. */
export const MICROMARK_SEGMENT_TARGET = 8_192;
/** A run of blocks longer than this with no safe cut sends the note to the line scanner: micromark is quadratic
 * on some inputs (e.g. thousands of unclosed `[a](b` on one paragraph), so its input size is bounded. */
export const MAX_MICROMARK_SEGMENT = 65_536;
/**
 * A block run longer than OPENER_SEGMENT_CHARS holding more than MAX_SEGMENT_OPENERS of one inline opener
 * (`[`, `<`, a backtick) sends the note to the line scanner: each unclosed opener makes micromark look ahead
 * over the rest of the paragraph, so thousands of them are quadratic (32 KiB of `[a](` followed by one `~`
 * took 4.5 s, 24 KiB of `<!--` with no `-->` as long; 8 KiB of either well under 0.1 s).
 */
export const OPENER_SEGMENT_CHARS = 8_192;
export const MAX_SEGMENT_OPENERS = 1_024;
const OPENERS: ReadonlyArray<readonly [number, string]> = [
  [91, '['],
  [60, '<'],
  [96, '`'],
];

export interface RawHeading {
  /** 0-based line index in the whole file. */
  lineIndex: number;
  depth: number;
  text: string;
}

export interface BodyStructure {
  /** Fenced/indented code and inline code (UTF-16 ranges in the whole file). */
  code: Range[];
  /**
   * Fenced code blocks, which chunks (and so keyword search and embeddings) leave out. Indented code stays in the
   * chunks: in notes it is mostly prose indented under a line that is not a list item (`1.**Step**` without a
   * space, then tab-indented bullets), which Obsidian's own search finds as text.
   */
  blockCode: Range[];
  /** Raw HTML (blocks and inline). */
  html: Range[];
  headings: RawHeading[];
  problems: string[];
}

/** Structure of the body that starts at UTF-16 index `bodyStart`. */
export interface ScanOptions {
  /** Characters per micromark run (tests vary it to prove segmenting changes nothing). */
  segmentTarget?: number;
  /** Skip micromark for bodies that cannot hold code or HTML (see isPlainIndentedBody). Default true. */
  plainFastPath?: boolean;
}

export function scanStructure(src: SourceText, bodyStart: number, options: ScanOptions = {}): BodyStructure {
  const body = src.text.slice(bodyStart);
  const fallback = (problem: string): BodyStructure => {
    const s = scanStructureByLines(src, bodyStart);
    return { ...s, problems: [...s.problems, `${problem}; parsed with the line scanner`] };
  };
  const depth = maxContainerNesting(body);
  if (depth > MAX_MICROMARK_NESTING)
    return fallback(`deep_nesting: container nesting ${depth} exceeds ${MAX_MICROMARK_NESTING}`);
  const run = longestEmphasisRun(body);
  if (run > MAX_DELIMITER_RUN)
    return fallback(`delimiter_run: a run of ${run} emphasis delimiters exceeds ${MAX_DELIMITER_RUN}`);
  if (options.plainFastPath !== false && isPlainIndentedBody(body)) return plainStructure(src, bodyStart);
  if (body.length > MAX_MICROMARK_CHARS)
    return fallback(`large_note: ${body.length} characters exceed ${MAX_MICROMARK_CHARS}`);
  const parts = blockSegments(src, bodyStart, options.segmentTarget ?? MICROMARK_SEGMENT_TARGET);
  for (const part of parts) {
    const risk = micromarkRisk(src.text, part);
    if (risk) return fallback(risk);
  }

  const merged: BodyStructure = { code: [], blockCode: [], html: [], headings: [], problems: [] };
  for (let i = 0; i < parts.length; i++) {
    const run = { start: parts[i].start, end: parts[i].end };
    let events: Event[];
    try {
      events = tokenize(src.text.slice(run.start, run.end));
      // A run whose parse ends inside a top-level fence or raw HTML block was cut where that block goes on:
      // join the next run and parse again (bounded: the joined run obeys the same limits).
      while (i + 1 < parts.length && endsInsideBlock(events, run.end - run.start)) {
        run.end = parts[++i].end;
        const risk = micromarkRisk(src.text, run);
        if (risk) return fallback(risk);
        events = tokenize(src.text.slice(run.start, run.end));
      }
    } catch (e) {
      return fallback(`micromark_failed: ${(e instanceof Error ? e.message : String(e)).slice(0, 200)}`);
    }
    collect(events, src, run.start, merged);
  }
  merged.code.sort((a, b) => a.start - b.start);
  merged.blockCode.sort((a, b) => a.start - b.start);
  return merged;
}

/**
 * Most notes skip micromark: a body with no backtick, tilde or `<` can hold code only as indented code, and
 * no HTML. Indented code cannot interrupt a paragraph, so a line indented 4+ columns (Obsidian's tab-indented
 * nested lists, wrapped list text) is safe when the line just above is paragraph text; 4+ columns of space
 * after a `>` or list marker could open code inside that container, and a heading indented 1–3 spaces may sit
 * in a list, so either sends the note to micromark. Its ATX headings are then exactly its column-0 `#` lines:
 * a heading never continues a paragraph lazily, and column 0 is left of any list content.
 */
export function isPlainIndentedBody(body: string): boolean {
  if (/[`~<]/.test(body)) return false;
  let previousIsText = false;
  let start = 0;
  while (start <= body.length) {
    let end = start;
    while (end < body.length && body.charCodeAt(end) !== 10 && body.charCodeAt(end) !== 13) end++;
    const line = prefixOf(body, start, end);
    if (line.blank) previousIsText = false;
    else {
      if (line.padAfterMarker >= 4) return false;
      if (line.indent >= 4 && !previousIsText) return false;
      if (line.indent > 0 && line.indent < 4 && line.markers === 0 && body.charCodeAt(line.contentStart) === 35)
        return false;
      previousIsText = line.text;
    }
    start = end + (body.charCodeAt(end) === 13 && body.charCodeAt(end + 1) === 10 ? 2 : 1);
  }
  return true;
}

interface LinePrefix {
  readonly blank: boolean;
  /** Columns of white space before the first container marker or text. */
  readonly indent: number;
  /** The widest run of white space (in columns) right after a `>` or list marker. */
  readonly padAfterMarker: number;
  readonly markers: number;
  readonly contentStart: number;
  /** The rest after the container markers is paragraph text: not empty, not a heading, not a rule or underline. */
  readonly text: boolean;
}

/** Container markers and white space at the start of body[start, end), with tabs expanded to stops of 4. */
function prefixOf(body: string, start: number, end: number): LinePrefix {
  let i = start;
  let col = 0;
  let indent = -1;
  let padAfterMarker = 0;
  let markers = 0;
  for (;;) {
    const wsStart = col;
    while (i < end) {
      const c = body.charCodeAt(i);
      if (c === 32) col++;
      else if (c === 9) col += 4 - (col % 4);
      else break;
      i++;
    }
    if (indent < 0) indent = col - wsStart;
    else padAfterMarker = Math.max(padAfterMarker, col - wsStart);
    const m = markerAt(body, i, end);
    if (m === 0) break;
    col += m;
    i += m;
    markers++;
  }
  const rest = body.slice(i, end);
  const blank = markers === 0 && rest === '';
  const text = rest !== '' && rest.charCodeAt(0) !== 35 && !/^[-*_=+ \t]+$/.test(rest);
  return { blank, indent, padAfterMarker: i === end ? 0 : padAfterMarker, markers, contentStart: i, text };
}

/** Length of a `>` or list marker (`-`, `+`, `*`, `1.`, `1)`) at i that is followed by white space or the line end, else 0. */
function markerAt(body: string, i: number, end: number): number {
  if (i >= end) return 0;
  const c = body.charCodeAt(i);
  if (c === 62) return 1; // '>'
  let j = i;
  if (c === 45 || c === 43 || c === 42) j = i + 1;
  else {
    while (j < end && j - i < 9 && body.charCodeAt(j) >= 48 && body.charCodeAt(j) <= 57) j++;
    if (j === i || j >= end || (body.charCodeAt(j) !== 46 && body.charCodeAt(j) !== 41)) return 0;
    j++;
  }
  const next = body.charCodeAt(j);
  return j === end || next === 32 || next === 9 ? j - i : 0;
}

function plainStructure(src: SourceText, bodyStart: number): BodyStructure {
  const headings: RawHeading[] = [];
  const first = bodyStart >= src.text.length ? src.lineCount : src.lineIndexOf(bodyStart);
  for (let li = first; li < src.lineCount; li++) {
    const start = Math.max(src.lineStarts[li], bodyStart);
    if (src.text.charCodeAt(start) !== 35) continue;
    const h = atxHeading(src.text.slice(start, src.lineEnds[li]));
    if (h) headings.push({ lineIndex: li, depth: h.depth, text: h.text });
  }
  return { code: [], blockCode: [], html: [], headings, problems: [] };
}

/** Why micromark may not be given text[run): too long, or too many unclosed inline openers. */
function micromarkRisk(text: string, run: Range): string | null {
  const size = run.end - run.start;
  if (size > MAX_MICROMARK_SEGMENT)
    return `large_block: ${size} characters without a block boundary exceed ${MAX_MICROMARK_SEGMENT}`;
  if (size <= OPENER_SEGMENT_CHARS) return null;
  for (const [code, char] of OPENERS) {
    const n = countChar(text, code, run.start, run.end);
    if (n > MAX_SEGMENT_OPENERS)
      return `many_openers: ${n} '${char}' in ${size} characters without a block boundary exceed ${MAX_SEGMENT_OPENERS}`;
  }
  return null;
}

/**
 * Whether a run's parse ends inside a top-level fenced code block or HTML block: only an unclosed fence or an
 * HTML block of kinds 1-5 goes on over a blank line into a column-0 line, and micromark ends either at the end of
 * its input (a closed one ends on its closing line, and a run that is not the last ends with a blank line).
 * micromark's view decides, not a pattern of ours: it keeps `<![CDATA[` open past `]]]>`, for one.
 */
function endsInsideBlock(events: Event[], length: number): boolean {
  let containers = 0;
  for (const [kind, token] of events) {
    const type = token.type as string;
    if (CONTAINERS.has(type)) containers += kind === 'enter' ? 1 : -1;
    else if (containers === 0 && kind === 'enter' && (type === 'codeFenced' || type === 'htmlFlow'))
      if (token.end.offset >= length) return true;
  }
  return false;
}

function countChar(text: string, code: number, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) if (text.charCodeAt(i) === code) n++;
  return n;
}

type Parser = ReturnType<typeof parse>;
let parser: Parser | null = null;

function tokenize(markdown: string): Event[] {
  // Combining micromark's constructs costs more than parsing a small note, so the parser is built once;
  // its only per-document state (definitions seen, lazy lines) is reset so every parse starts clean.
  // Emphasis (`attention`) is left out: its delimiter matching is quadratic in the delimiters of one
  // paragraph (16 KiB of `*a` took 2.3 s), and code spans, raw HTML and headings never depend on it.
  parser ??= parse({ extensions: [{ disable: { null: ['attention'] } }] });
  parser.defined = [];
  parser.lazy = {};
  return postprocess(parser.document().write(preprocess()(markdown, undefined, true)));
}

const CONTAINERS = new Set(['blockQuote', 'listOrdered', 'listUnordered']);
const CODE = new Set(['codeFenced', 'codeIndented', 'codeText']);
const HTML = new Set(['htmlFlow', 'htmlText']);

function collect(events: Event[], src: SourceText, base: number, out: BodyStructure): void {
  let containers = 0;
  for (const [kind, token] of events) {
    const type = token.type as string;
    if (CONTAINERS.has(type)) {
      containers += kind === 'enter' ? 1 : -1;
      continue;
    }
    if (kind !== 'enter') continue;
    const range = { start: base + token.start.offset, end: base + token.end.offset };
    if (CODE.has(type)) {
      out.code.push(range);
      if (type === 'codeFenced') out.blockCode.push(range);
    } else if (HTML.has(type)) out.html.push(range);
    else if (type === 'atxHeading' && containers === 0) {
      // Only top-level ATX headings make the outline; headings in quotes or lists and setext headings do not.
      const lineIndex = src.lineIndexOf(range.start);
      const h = atxHeading(src.lineText(lineIndex));
      if (h) out.headings.push({ lineIndex, depth: h.depth, text: h.text });
    }
  }
}

/** Deepest blockquote/list container nesting over all lines (a cheap, non-recursive pre-check): `>`, bullet and
 * ordered markers (micromark's cost grows faster than linearly with them: docs/security.md), and indentation. */
export function maxContainerNesting(text: string): number {
  let max = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    let depth = 0;
    let indent = 0;
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 32) {
        indent++;
        i++;
        continue;
      }
      if (c === 9) {
        indent += 4;
        i++;
        continue;
      }
      if (c === 62) {
        depth++;
        i++;
        continue;
      } // '>'
      if ((c === 45 || c === 42 || c === 43) && isSpaceOrEnd(text.charCodeAt(i + 1))) {
        depth++;
        i++;
        continue;
      }
      const ordered = orderedMarkerEnd(text, i);
      if (ordered > i) {
        depth++;
        i = ordered;
        continue;
      }
      break;
    }
    depth += indent >> 1;
    if (depth > max) max = depth;
    while (i < n) {
      const c = text.charCodeAt(i++);
      if (c === 10 || c === 13) break;
    }
  }
  return max;
}

/** Where an ordered list marker (1–9 digits, then `.` or `)`, then white space or the line end) at i ends, else i. */
function orderedMarkerEnd(text: string, i: number): number {
  let j = i;
  while (j - i < 9 && text.charCodeAt(j) >= 48 && text.charCodeAt(j) <= 57) j++;
  if (j === i) return i;
  const c = text.charCodeAt(j);
  return (c === 46 || c === 41) && isSpaceOrEnd(text.charCodeAt(j + 1)) ? j + 1 : i;
}

function isSpaceOrEnd(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13 || Number.isNaN(c);
}

function longestEmphasisRun(text: string): number {
  let best = 0;
  for (const m of text.matchAll(/\*{64,}|_{64,}/g)) best = Math.max(best, m[0].length);
  return best;
}
