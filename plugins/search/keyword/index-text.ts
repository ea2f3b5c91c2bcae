// The indexed form of text, shared by the keyword contributor (note text) and the query planner (query words), so
// both split alike. Pure string work; no SQL.
//
// PostgreSQL's parser keeps a dotted, slashed or linked run (`task.due.moment`, `TaskProperties.test.md`,
// `github.com/x/y`, `Filters#Custom`) as one host/file/url token, so none of its words could match a query that
// names them: a note documenting `task.due.moment` never held `due` or `moment`. Such separators between letters
// or digits become spaces before the text is tokenised (the words stay adjacent, so the run still matches as a
// phrase of them), and a query word holding them becomes that phrase.
import { cjkPhraseText, splitCjk } from './cjk.js';

/** A separator inside a compound token (when it stands between two letters or digits). */
const SEPARATOR = /[./\\@:=#~]/g;
const LETTER_OR_DIGIT = /^[\p{L}\p{N}]$/u;
const WORD_CHAR = /^[\p{L}\p{N}_]$/u;

/** ASCII letters, digits (1) and `_` (2); other code units below 128 are neither. */
const ASCII = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  ASCII[c] = /[A-Za-z0-9]/.test(ch) ? 1 : ch === '_' ? 2 : 0;
}

/** The code point ending just before `i` (a surrogate pair whole), or -1 at the start. */
function codePointBefore(text: string, i: number): number {
  if (i <= 0) return -1;
  const low = text.charCodeAt(i - 1);
  if (low >= 0xdc00 && low <= 0xdfff && i >= 2) {
    const high = text.charCodeAt(i - 2);
    if (high >= 0xd800 && high <= 0xdbff) return ((high - 0xd800) << 10) + (low - 0xdc00) + 0x10000;
  }
  return low;
}

/** A code point's class by its regex, remembered for the Basic Multilingual Plane (0: not asked yet, 1: yes, 2: no). */
function classifier(regex: RegExp): (cp: number) => boolean {
  let seen: Uint8Array | undefined;
  return (cp) => {
    if (cp > 0xffff) return regex.test(String.fromCodePoint(cp));
    seen ??= new Uint8Array(0x10000);
    if (seen[cp] === 0) seen[cp] = regex.test(String.fromCharCode(cp)) ? 1 : 2;
    return seen[cp] === 1;
  };
}
const isLetterOrDigit = classifier(LETTER_OR_DIGIT);
const isWordChar = classifier(WORD_CHAR);

/** Whether a code point is a letter or a digit (\p{L}\p{N}); -1 (no code point) is not. */
function letterOrDigit(cp: number): boolean {
  if (cp < 0) return false;
  return cp < 128 ? ASCII[cp] === 1 : isLetterOrDigit(cp);
}

/**
 * Compound tokens split into their words: each separator between two letters or digits becomes a space. Found by
 * scanning for the separators and looking at their neighbours, not by a look-behind regex over the whole text (the
 * costliest part of a long English note's keyword text).
 */
export function splitCompounds(text: string): string {
  let out = '';
  let from = 0;
  SEPARATOR.lastIndex = 0;
  for (let m = SEPARATOR.exec(text); m; m = SEPARATOR.exec(text)) {
    const i = m.index;
    if (letterOrDigit(codePointBefore(text, i)) && letterOrDigit(text.codePointAt(i + 1) ?? -1)) {
      out += `${text.slice(from, i)} `;
      from = i + 1;
    }
  }
  return from === 0 ? text : out + text.slice(from);
}

export interface IndexParts {
  /** What PostgreSQL's parser tokenises: the text without its CJK runs, compound tokens split into their words. */
  readonly text: string;
  /** The CJK runs' bigrams as a tsvector literal ('' when none; see splitCjk). */
  readonly cjk: string;
  /** Indexed words (the parser's words of `text` plus the CJK lexeme occurrences): the length BM25 normalises by. */
  readonly words: number;
}

/**
 * How many runs of letters, digits and `_` (\p{L}\p{N}_) the text holds: counted code point by code point, ASCII
 * from a table (a match object a word made this the main thread's costliest step on long English notes).
 */
function wordCount(text: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    let word: boolean;
    if (c < 128) word = ASCII[c] !== 0;
    else {
      const cp = text.codePointAt(i) as number;
      if (cp > 0xffff) i++;
      word = isWordChar(cp);
    }
    if (word && !inWord) n++;
    inWord = word;
  }
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
