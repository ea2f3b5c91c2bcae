// Regions where Obsidian syntax is inert: code (from structure), %%comments%%, $math$ and $$math$$.
// Pure string scanning over already code-masked text; it never looks inside code for comment or math markers.
import { maskText, mergeRanges, type Range } from './source-text.js';

export interface NoteMasks {
  /** Code, comments and math: links, tags, tasks, block ids and chunks ignore these. */
  inert: Range[];
  /** Comments only (chunks drop them with code). */
  comments: Range[];
}

export function scanMasks(text: string, bodyStart: number, code: Range[]): NoteMasks {
  const codeMasked = maskText(text, code);
  const comments: Range[] = [];
  let i = codeMasked.indexOf('%%', bodyStart);
  while (i !== -1) {
    const close = codeMasked.indexOf('%%', i + 2);
    const end = close === -1 ? text.length : close + 2;
    comments.push({ start: i, end });
    if (close === -1) break;
    i = codeMasked.indexOf('%%', end);
  }
  const noComments = maskText(codeMasked, comments);
  const math: Range[] = [];
  const block = /\$\$[\s\S]*?\$\$/g;
  block.lastIndex = bodyStart;
  for (let m = block.exec(noComments); m; m = block.exec(noComments)) {
    if (m.index > 0 && noComments[m.index - 1] === '\\') {
      block.lastIndex = m.index + 1;
      continue;
    }
    math.push({ start: m.index, end: m.index + m[0].length });
  }
  const noBlocks = maskText(noComments, mergeRanges(math));
  math.push(...inlineMath(noBlocks, bodyStart));
  return { inert: mergeRanges([...code, ...comments, ...math]), comments };
}

/**
 * Inline `$math$`: what `/\$(?![\s$])(?:[^$\r\n\\]|\\[^\r\n])*?(?<![\s\\])\$(?!\d)/g` matches, skipping
 * matches whose opening `$` is escaped. The pattern rescans the rest of the line from every `$`, and a line
 * of escaped dollars (`$a \$a \$…`) made that quadratic; here the closing `$` (or failure) seen from each
 * position is computed once, right to left, so every opening `$` is answered in constant time.
 */
function inlineMath(text: string, from: number): Range[] {
  const out: Range[] = [];
  const first = text.indexOf('$', from);
  if (first === -1) return out;
  const n = text.length;
  // close[j]: index of the `$` that closes a span whose content is scanned from j, or -1 when none does.
  const close = new Int32Array(n + 2).fill(-1);
  for (let j = n - 1; j >= first; j--) {
    const c = text.charCodeAt(j);
    if (c === 10 || c === 13) close[j] = -1;
    else if (c === 36) close[j] = validClose(text, j) ? j : -1;
    else if (c === 92) close[j] = j + 1 < n && !isLineBreak(text.charCodeAt(j + 1)) ? close[j + 2] : -1;
    else close[j] = close[j + 1];
  }
  for (let p = first; p !== -1 && p < n; ) {
    const next = text.charCodeAt(p + 1);
    const end = p + 1 < n && !isJsSpace(next) && next !== 36 ? close[p + 1] : -1;
    if (end === -1) {
      p = text.indexOf('$', p + 1);
      continue;
    }
    if (p > 0 && text.charCodeAt(p - 1) === 92) {
      p = text.indexOf('$', p + 1);
      continue;
    }
    out.push({ start: p, end: end + 1 });
    p = text.indexOf('$', end + 1);
  }
  return out;
}

/** A `$` at j closes inline math when no white space or `\` precedes it and no digit follows. */
function validClose(text: string, j: number): boolean {
  const before = text.charCodeAt(j - 1);
  const after = text.charCodeAt(j + 1);
  return !isJsSpace(before) && before !== 92 && !(after >= 48 && after <= 57);
}

function isLineBreak(c: number): boolean {
  return c === 10 || c === 13;
}

/** `\s` in a JavaScript regular expression. */
function isJsSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}
