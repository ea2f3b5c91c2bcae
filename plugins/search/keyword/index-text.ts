// The indexed form of text, shared by the keyword contributor (note text) and the query planner (query words), so
// both split alike. Pure string work; no SQL.
//
// PostgreSQL's parser keeps a dotted, slashed or linked run (`task.due.moment`, `TaskProperties.test.md`,
// `github.com/x/y`, `Filters#Custom`) as one host/file/url token, so none of its words could match a query that
// names them: a note documenting `task.due.moment` never held `due` or `moment`. Such separators between letters
// or digits become spaces before the text is tokenised (the words stay adjacent, so the run still matches as a
// phrase of them), and a query word holding them becomes that phrase.
import { cjkIndexText, cjkPhraseText } from './cjk.js';

/** A separator inside a compound token: between two letters or digits. */
const COMPOUND = /(?<=[\p{L}\p{N}])[./\\@:=#~](?=[\p{L}\p{N}])/gu;
const HAS_COMPOUND = /[\p{L}\p{N}][./\\@:=#~][\p{L}\p{N}]/u;

/** Compound tokens split into their words. */
export function splitCompounds(text: string): string {
  return HAS_COMPOUND.test(text) ? text.replace(COMPOUND, ' ') : text;
}

/** Note text as indexed: CJK runs as bigrams (see cjk.ts), compound tokens as their words. */
export function indexText(text: string): string {
  return splitCompounds(cjkIndexText(text));
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
