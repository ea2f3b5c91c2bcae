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
    if (m.index > 0 && noComments[m.index - 1] === '\\') { block.lastIndex = m.index + 1; continue; }
    math.push({ start: m.index, end: m.index + m[0].length });
  }
  const noBlocks = maskText(noComments, mergeRanges(math));
  const inline = /\$(?![\s$])(?:[^$\r\n\\]|\\[^\r\n])*?(?<![\s\\])\$(?!\d)/g;
  inline.lastIndex = bodyStart;
  for (let m = inline.exec(noBlocks); m; m = inline.exec(noBlocks)) {
    if (m.index > 0 && noBlocks[m.index - 1] === '\\') { inline.lastIndex = m.index + 1; continue; }
    math.push({ start: m.index, end: m.index + m[0].length });
  }
  return { inert: mergeRanges([...code, ...comments, ...math]), comments };
}
