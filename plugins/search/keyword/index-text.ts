// The indexed form of text, shared by the keyword contributor (note text) and the query planner (query words), so
// both split alike. Pure string work; no SQL.
//
// PostgreSQL's parser keeps a dotted, slashed or linked run (`task.due.moment`, `TaskProperties.test.md`,
// `github.com/x/y`, `Filters#Custom`) as one host/file/url token, so none of its words could match a query that
// names them: a note documenting `task.due.moment` never held `due` or `moment`. Such separators between letters
// or digits become spaces before the text is tokenised (the words stay adjacent, so the run still matches as a
// phrase of them), and a query word holding them becomes that phrase.
import { cjkPhraseText, splitCjk } from './cjk.js';

/** A separator inside a compound token: between two letters or digits. */
const COMPOUND = /(?<=[\p{L}\p{N}])[./\\@:=#~](?=[\p{L}\p{N}])/gu;
const HAS_COMPOUND = /[\p{L}\p{N}][./\\@:=#~][\p{L}\p{N}]/u;

/** Compound tokens split into their words. */
export function splitCompounds(text: string): string {
  return HAS_COMPOUND.test(text) ? text.replace(COMPOUND, ' ') : text;
}

export interface IndexParts {
  /** What PostgreSQL's parser tokenises: the text without its CJK runs, compound tokens split into their words. */
  readonly text: string;
  /** The CJK runs' bigrams as a tsvector literal ('' when none; see splitCjk). */
  readonly cjk: string;
  /** Indexed words (the parser's words of `text` plus the CJK lexeme occurrences): the length BM25 normalises by. */
  readonly words: number;
}

const WORD = /[\p{L}\p{N}_]+/gu;

function wordCount(text: string): number {
  let n = 0;
  for (const _ of text.matchAll(WORD)) n++;
  return n;
}

/** Note text as indexed: CJK runs as a vector of bigrams (see cjk.ts), the rest with compound tokens as their words. */
export function indexParts(text: string): IndexParts {
  const split = splitCjk(text);
  const rest = splitCompounds(split.rest);
  return { text: rest, cjk: split.vector, words: wordCount(rest) + split.tokens };
}

/** A phrase's text as matched against the index: its CJK runs as bigram runs, its compound tokens as words. */
export function phraseText(text: string): string {
  return splitCompounds(cjkPhraseText(text));
}

/** A (non-CJK) query word in its indexed form: itself, or the phrase of its words when it is a compound token. */
export function compoundWordQuery(word: string): string {
  const split = splitCompounds(word);
  return split === word ? word : `"${split}"`;
}
