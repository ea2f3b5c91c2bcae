// Heading-aware chunks for embedding: one section's own text (block code and comments left out), split to a
// token budget with optional overlap, prefixed `Title > Heading > Subheading`. Never crosses a heading.
import type { Chunk } from './types.js';
import type { Range, SourceText } from './source-text.js';

export const DEFAULT_CHUNK_TOKENS = 512;
export const DEFAULT_CHUNK_OVERLAP = 0;
/** The smallest content budget a chunk gets once its prefix is paid for. */
const MIN_CONTENT_TOKENS = 16;

/** Rough token count: ~4 ASCII characters per token, one token per other character (CJK and the like). */
export function estimateTokens(text: string): number {
  let cost = 0;
  for (let i = 0; i < text.length; i++) cost += charCost(text.charCodeAt(i));
  return Math.ceil(cost);
}

function charCost(c: number): number {
  if (c < 0x80) return 0.25;
  if (c >= 0xdc00 && c <= 0xdfff) return 0; // low surrogate: the pair counts once
  return 1;
}

export interface ChunkSection {
  sectionOrdinal: number;
  headingPath: string;
  /** Title followed by the heading chain. */
  prefixParts: string[];
  /** UTF-16 range of the section's own content (heading line excluded). */
  start: number;
  end: number;
}

export interface ChunkOptions {
  chunkTokens: number;
  chunkOverlap: number;
}

/** `excluded` must be merged and sorted. */
export function buildChunks(
  src: SourceText,
  sections: ChunkSection[],
  excluded: Range[],
  options: ChunkOptions,
): Chunk[] {
  const chunks: Chunk[] = [];
  for (const section of sections) {
    const prefix = section.prefixParts.join(' > ');
    const budget = Math.max(MIN_CONTENT_TOKENS, options.chunkTokens - estimateTokens(prefix) - 1);
    const overlap = Math.max(0, Math.min(options.chunkOverlap, Math.floor(budget / 2)));
    const pieces = splitLarge(src.text, paragraphs(src.text, keptRanges(section, excluded)), budget);
    let current: Range[] = [];
    let currentTokens = 0;
    const flush = (): void => {
      if (current.length === 0) return;
      const content = current.map((r) => src.text.slice(r.start, r.end)).join('\n\n');
      const text = `${prefix}\n\n${content}`;
      chunks.push({
        ordinal: chunks.length + 1,
        sectionOrdinal: section.sectionOrdinal,
        headingPath: section.headingPath,
        text,
        tokenEstimate: estimateTokens(text),
        start: src.byte(current[0].start),
        end: src.byte(current[current.length - 1].end),
      });
    };
    for (const piece of pieces) {
      const tokens = estimateTokens(src.text.slice(piece.start, piece.end));
      if (current.length > 0 && currentTokens + tokens > budget) {
        const hasNew = current.some((r) => !(r as OverlapRange).overlap);
        if (hasNew) flush();
        current = overlap > 0 ? tail(src.text, current, overlap) : [];
        currentTokens = current.reduce((n, r) => n + estimateTokens(src.text.slice(r.start, r.end)), 0);
        if (currentTokens + tokens > budget) {
          current = [];
          currentTokens = 0;
        }
      }
      current.push(piece);
      currentTokens += tokens;
    }
    if (current.some((r) => !(r as OverlapRange).overlap)) flush();
  }
  return chunks;
}

interface OverlapRange extends Range {
  overlap?: true;
}

/** The section's range minus excluded ranges. */
function keptRanges(section: ChunkSection, excluded: Range[]): Range[] {
  const out: Range[] = [];
  let pos = section.start;
  for (const r of excluded) {
    if (r.end <= pos) continue;
    if (r.start >= section.end) break;
    if (r.start > pos) out.push({ start: pos, end: r.start });
    pos = Math.max(pos, r.end);
  }
  if (pos < section.end) out.push({ start: pos, end: section.end });
  return out;
}

/** Split kept text into trimmed, non-empty paragraphs (blank-line separated). */
function paragraphs(text: string, kept: Range[]): Range[] {
  const out: Range[] = [];
  for (const r of kept) {
    // Search a slice, never the rest of the note: a regex left to run past r.end makes this quadratic.
    const part = text.slice(r.start, r.end);
    const blank = /(?:\r\n|\r|\n)[ \t]*(?:\r\n|\r|\n)/g;
    let pos = 0;
    for (let m = blank.exec(part); m; m = blank.exec(part)) {
      pushTrimmed(text, r.start + pos, r.start + m.index, out);
      pos = m.index + m[0].length;
    }
    pushTrimmed(text, r.start + pos, r.end, out);
  }
  return out;
}

function pushTrimmed(text: string, start: number, end: number, out: Range[]): void {
  while (start < end && /\s/.test(text[start])) start++;
  while (end > start && /\s/.test(text[end - 1])) end--;
  if (end > start) out.push({ start, end });
}

/** Cut any paragraph over budget at whitespace (or hard) so every piece fits. */
function splitLarge(text: string, pieces: Range[], budget: number): Range[] {
  const out: Range[] = [];
  for (const p of pieces) {
    let start = p.start;
    let cost = 0;
    let lastSpace = -1;
    for (let i = p.start; i < p.end; i++) {
      const c = text.charCodeAt(i);
      cost += charCost(c);
      if (c === 32 || c === 10 || c === 13 || c === 9) lastSpace = i;
      if (cost >= budget) {
        let cut = lastSpace > start + (i - start) / 2 ? lastSpace : i + 1;
        if (cut < p.end && isLowSurrogate(text.charCodeAt(cut))) cut++;
        pushTrimmed(text, start, cut, out);
        start = cut;
        i = cut - 1;
        cost = 0;
        lastSpace = -1;
      }
    }
    pushTrimmed(text, start, p.end, out);
  }
  return out;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/** The last `tokens` worth of a chunk's pieces, to open the next chunk with. */
function tail(text: string, pieces: Range[], tokens: number): OverlapRange[] {
  const out: OverlapRange[] = [];
  let left = tokens;
  for (let k = pieces.length - 1; k >= 0 && left > 0; k--) {
    const p = pieces[k];
    let i = p.end;
    let cost = 0;
    while (i > p.start && cost + charCost(text.charCodeAt(i - 1)) <= left) cost += charCost(text.charCodeAt(--i));
    if (i > p.start && isLowSurrogate(text.charCodeAt(i))) i++;
    // Start the overlap on a word boundary when one is near.
    const space = text.slice(i, p.end).search(/\s/);
    if (i > p.start && space >= 0 && space < (p.end - i) / 2) i += space + 1;
    if (i < p.end) out.unshift({ start: i, end: p.end, overlap: true });
    left -= cost;
    if (i > p.start) break;
  }
  return out;
}
