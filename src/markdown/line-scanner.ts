// Line-by-line fallback for notes remark must not see (pathological nesting, huge files): fences, inline
// code and ATX headings by the CommonMark fence grammar. Iterative and linear; never recurses.
import type { Range, SourceText } from './source-text.js';
import type { BodyStructure, RawHeading } from './structure.js';

// `[^]*`, not `(.*)$`: `.` stops at U+2028/U+2029, and the failed `$` then retried every shorter fence run
// (quadratic on a long run of backticks); CommonMark ends lines only at CR and LF, which lines never hold.
const FENCE_OPEN = /^( {0,3})(`{3,}|~{3,})([^]*)/;
const ATX = /^ {0,3}(#{1,6})(?:[ \t](.*))?$/;

/** An ATX heading line's depth and text (closing `#` run removed), or null. */
export function atxHeading(line: string): { depth: number; text: string } | null {
  const m = ATX.exec(line.charCodeAt(0) === 0xfeff ? line.slice(1) : line);
  if (!m) return null;
  let text = (m[2] ?? '').trim();
  if (/^#+$/.test(text)) text = '';
  else text = withoutClosingSequence(text).trim();
  return { depth: m[1].length, text };
}

/**
 * `text` without a closing `#` run that follows a space or tab (what `/[ \t]+#+$/` removes). A loop: the
 * pattern retried every run of blanks to its end, quadratic on a heading padded with blanks.
 */
function withoutClosingSequence(text: string): string {
  let i = text.length;
  while (i > 0 && text.charCodeAt(i - 1) === 35) i--;
  if (i === text.length || i === 0) return text;
  const c = text.charCodeAt(i - 1);
  return c === 32 || c === 9 ? text.slice(0, i) : text;
}

/** Strip a blockquote prefix so fences inside `>` quotes are still seen. */
function stripQuotes(line: string): string {
  return line.replace(/^(?:[ \t]{0,3}>[ \t]?)+/, '');
}

export function scanStructureByLines(src: SourceText, bodyStart: number): BodyStructure {
  const code: Range[] = [];
  const blockCode: Range[] = [];
  const headings: RawHeading[] = [];
  const first = bodyStart >= src.text.length ? src.lineCount : src.lineIndexOf(bodyStart);
  let fence: { char: string; len: number; start: number } | null = null;
  for (let li = first; li < src.lineCount; li++) {
    const raw = src.lineText(li);
    const line = stripQuotes(raw);
    if (fence) {
      const m = /^ {0,3}(`+|~+)[ \t]*$/.exec(line);
      if (m && m[1][0] === fence.char && m[1].length >= fence.len) {
        code.push({ start: fence.start, end: src.lineEnds[li] });
        blockCode.push({ start: fence.start, end: src.lineEnds[li] });
        fence = null;
      }
      continue;
    }
    const open = FENCE_OPEN.exec(line);
    if (open && !(open[2][0] === '`' && open[3].includes('`'))) {
      fence = { char: open[2][0], len: open[2].length, start: Math.max(src.lineStarts[li], bodyStart) };
      continue;
    }
    if (line === raw) {
      const h = atxHeading(raw);
      if (h) headings.push({ lineIndex: li, depth: h.depth, text: h.text });
    }
    inlineCode(raw, src.lineStarts[li], code);
  }
  if (fence) {
    code.push({ start: fence.start, end: src.text.length });
    blockCode.push({ start: fence.start, end: src.text.length });
  }
  code.sort((a, b) => a.start - b.start);
  return { code, blockCode, html: [], headings, problems: [] };
}

/**
 * Single-line backtick code spans: a run of n backticks closed by the next run of exactly n. The runs are
 * listed once and each run's next run of the same length is found right to left, so a line of unclosed
 * runs of many lengths stays linear (searching the rest of the line from each run was not).
 */
function inlineCode(line: string, lineStart: number, out: Range[]): void {
  const starts: number[] = [];
  const ends: number[] = [];
  for (let i = line.indexOf('`'); i !== -1; i = line.indexOf('`', ends[ends.length - 1])) {
    let j = i;
    while (line.charCodeAt(j) === 96) j++;
    starts.push(i);
    ends.push(j);
  }
  const nextSame = new Int32Array(starts.length).fill(-1);
  const lastOfLength = new Map<number, number>();
  for (let r = starts.length - 1; r >= 0; r--) {
    const len = ends[r] - starts[r];
    nextSame[r] = lastOfLength.get(len) ?? -1;
    lastOfLength.set(len, r);
  }
  for (let r = 0; r < starts.length; r++) {
    const close = nextSame[r];
    if (close === -1) continue;
    out.push({ start: lineStart + starts[r], end: lineStart + ends[close] });
    r = close;
  }
}

const HTML_RAW_OPEN = /^ {0,3}<(?:(script|pre|style|textarea)(?=[\s>]|$)|(!--)|(\?)|(![A-Za-z])|(!\[CDATA\[))/i;
const HTML_RAW_CLOSE: Record<string, RegExp> = {
  tag: /<\/(?:script|pre|style|textarea)>/i,
  comment: /-->/,
  pi: /\?>/,
  decl: />/,
  cdata: /\]\]>/,
};

/**
 * Split the body into runs of top-level blocks that parse identically on their own: a cut falls before a
 * column-0, non-blank line that follows a blank line, outside fences and raw HTML blocks of kinds 1-5. Such a
 * line continues no list, quote, paragraph or HTML block of kinds 6-7, so micromark sees the same blocks.
 * (Not before every heading: an HTML block of kind 6 or 7 swallows a heading line until the next blank line.)
 * Runs are grouped up to `target` characters to amortise per-parse overhead. The cuts are proposals: this scan
 * does not track containers, so a fence line inside an HTML block of kind 6 or 7 (or a quoted fence line in
 * top-level code) can misplace a fence, and its end markers are not micromark's in every case. scanStructure
 * therefore checks each run's own parse and joins a run to the next while that parse ends inside a block.
 */
export function blockSegments(src: SourceText, bodyStart: number, target: number): Range[] {
  const text = src.text;
  const first = bodyStart >= text.length ? src.lineCount : src.lineIndexOf(bodyStart);
  const cuts: number[] = [bodyStart];
  let fence: { char: string; len: number } | null = null;
  let html: RegExp | null = null;
  let prevBlank = false;
  for (let li = first; li < src.lineCount; li++) {
    const line = src.lineText(li);
    if (fence) {
      const m = /^ {0,3}(`+|~+)[ \t]*$/.exec(stripQuotes(line));
      if (m && m[1][0] === fence.char && m[1].length >= fence.len) fence = null;
      prevBlank = false;
      continue;
    }
    if (html) {
      if (html.test(line)) html = null;
      prevBlank = false;
      continue;
    }
    const blank = /^[ \t]*$/.test(line);
    const c = line.charCodeAt(0);
    const col0 = !blank && c !== 32 && c !== 9;
    if (li > first && col0 && prevBlank && src.lineStarts[li] > bodyStart) cuts.push(src.lineStarts[li]);
    const open = FENCE_OPEN.exec(stripQuotes(line));
    if (open && !(open[2][0] === '`' && open[3].includes('`'))) fence = { char: open[2][0], len: open[2].length };
    const h = HTML_RAW_OPEN.exec(line);
    if (h) {
      const kind = h[1] ? 'tag' : h[2] ? 'comment' : h[3] ? 'pi' : h[4] ? 'decl' : 'cdata';
      const close = HTML_RAW_CLOSE[kind];
      if (!close.test(line.slice(h[0].length))) html = close;
    }
    prevBlank = blank;
  }
  cuts.push(text.length);
  const out: Range[] = [];
  let start = cuts[0];
  for (let i = 1; i < cuts.length; i++) {
    const last = i === cuts.length - 1;
    if (last || cuts[i] - start >= target) {
      if (cuts[i] > start) out.push({ start, end: cuts[i] });
      start = cuts[i];
    }
  }
  return out;
}
