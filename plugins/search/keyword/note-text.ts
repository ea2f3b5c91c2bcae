// Pure extraction of what the keyword vector indexes from a NoteModel: title and alias text (weight A, its CJK
// bigrams B), the body text (weight D, bigrams C), the opening words (head) and the exact-title keys. No SQL here.
import type { NoteModel } from '../../../src/markdown/index.js';
import { textWindow } from '../../../src/sdk/index.js';
import { indexParts } from './index-text.js';
import { normaliseTitle } from './query-parse.js';

export interface KeywordText {
  readonly titleText: string;
  /** The title and aliases as the parser reads them (CJK runs out, compound tokens split, see index-text.ts). */
  readonly titleIndex: string;
  /** The title's CJK runs as a tsvector literal of bigrams ('' when none). */
  readonly titleCjk: string;
  readonly titleKeys: string[];
  readonly body: string;
  /** The body as the parser reads it (as the title); the stored body stays as written, for snippets. */
  readonly bodyIndex: string;
  readonly bodyCjk: string;
  /** Indexed words of title and body: the note's length for BM25's length normalisation. */
  readonly length: number;
  readonly head: string;
}

/**
 * The note model carries no body string, so the body is rebuilt from its heading-aware chunks (each
 * `prefix\n\ncontent`) plus its heading texts: fenced code and comments are therefore not indexed.
 */
export function keywordText(model: NoteModel, limits: { headChars: number; bodyChars: number }): KeywordText {
  const titles = [model.title, ...model.aliases].filter((t) => t && t.trim());
  const parts: string[] = [];
  const headings = new Map(model.outline.map((h) => [h.ordinal, h.text]));
  let lastSection = -1;
  for (const chunk of model.chunks) {
    if (chunk.sectionOrdinal !== lastSection) {
      const heading = headings.get(chunk.sectionOrdinal);
      if (heading) parts.push(heading);
      lastSection = chunk.sectionOrdinal;
    }
    const cut = chunk.text.indexOf('\n\n');
    parts.push(cut >= 0 ? chunk.text.slice(cut + 2) : chunk.text);
  }
  for (const h of model.outline) if (!model.chunks.some((c) => c.sectionOrdinal === h.ordinal)) parts.push(h.text);
  const body = parts.join('\n\n').slice(0, limits.bodyChars);
  const titleText = titles.join('\n');
  const title = indexParts(titleText);
  const text = indexParts(body);
  return {
    titleText,
    titleIndex: title.text,
    titleCjk: title.cjk,
    titleKeys: [...new Set(titles.map(normaliseTitle))],
    body,
    bodyIndex: text.text,
    bodyCjk: text.cjk,
    length: title.words + text.words,
    head: headOf(body, limits.headChars),
  };
}

/** The opening words of a body, markdown punctuation softened, cut at a word boundary. */
export function headOf(body: string, chars: number): string {
  // Only the body's opening can reach the head: a prefix is flattened, longer while it still falls short, not the
  // whole body (up to search.bodyChars). Flattening a prefix gives a prefix of the whole's flattening, so what is
  // cut from it below is the same as long as it runs past the cut.
  let flat = '';
  for (let take = Math.max(64, chars * 4); ; take *= 2) {
    flat = flatten(take >= body.length ? body : body.slice(0, take));
    if (take >= body.length || flat.length > chars + 2) break;
  }
  if (flat.length <= chars) return flat;
  // Never half a surrogate pair (an emoji at the limit in text without spaces): the keyword row travels as JSON,
  // and PostgreSQL refuses a lone surrogate there, failing the note's index write.
  const cut = textWindow(flat, 0, chars).content;
  const space = cut.lastIndexOf(' ');
  return `${(space > chars * 0.6 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** Markdown punctuation runs and whitespace runs as one space each, trimmed. */
function flatten(text: string): string {
  return text
    .replace(/[#>*_`|[\]]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}
