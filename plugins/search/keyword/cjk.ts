// CJK text for the keyword index and its queries: PostgreSQL's parser keeps a run of Han, kana or hangul as one
// token, so a substring of it could never match. Pure string work; no SQL, no I/O, no ICU call on note text.

/** A run of Chinese, Japanese or Korean characters (the scripts the default ts parser cannot split). */
const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc]+/gu;
const HAS_CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const SURROGATE = /[\uD800-\uDFFF]/;

export function hasCjk(text: string): boolean {
  return HAS_CJK.test(text);
}

/** tsvector limits: a lexeme keeps at most this many positions, and no position is above MAX_POSITION. */
const MAX_POSITIONS = 256;
const MAX_POSITION = 16383;

export interface CjkSplit {
  /** The text with every CJK run replaced by a space: what PostgreSQL's parser tokenises. */
  readonly rest: string;
  /** The runs as a tsvector literal (`'保持':1 '持健':2 …`), '' when the text holds none. */
  readonly vector: string;
  /** Lexeme occurrences the runs contribute (each run's length in characters): their share of the note's length. */
  readonly tokens: number;
}

/**
 * The indexed form of a text's CJK runs, built here instead of by `to_tsvector`: every run becomes its
 * overlapping character bigrams (in order, so adjacent bigrams sit at adjacent positions and a longer word
 * matches as a phrase of them), then its last character. A one-character word (such as 盐) is matched as a prefix
 * (`盐:*`, see cjkPrefixQuery): every occurrence of a character starts a bigram or ends its run, so the prefix
 * finds each one. The runs' positions follow one another with a gap between runs; the vector goes after the
 * parsed rest of the text (`||` moves it past the rest's positions), so a phrase matches within a run, not across
 * a run's edge into the words around it.
 * Why a vector of its own: the bigrams carry their own weights (B in the title, C in the body), which keep them out
 * of the body GIN index (search migration 0009), and `to_tsvector` over bigram text parsed and stemmed every bigram
 * as a word, about twice the cost of building the literal here and parsing it (the built-in configs map a CJK token
 * to itself: their dictionaries lower-case or stem an alphabet CJK is not written in). Why not Intl.Segmenter on notes: ICU's iterator measured ~1.3 µs a character per run
 * and superlinear on long strings, and bigrams already match every word a segmenter would find, however it splits
 * the note. Other text is left as it is.
 */
export function splitCjk(text: string): CjkSplit {
  if (!hasCjk(text)) return { rest: text, vector: '', tokens: 0 };
  const positions = new Map<string, number[]>();
  let position = 0;
  let tokens = 0;
  const add = (lexeme: string): void => {
    position++;
    const at = position < MAX_POSITION ? position : MAX_POSITION;
    const list = positions.get(lexeme);
    if (list === undefined) positions.set(lexeme, [at]);
    else if (list.length < MAX_POSITIONS && list[list.length - 1] !== at) list.push(at);
  };
  const rest = text.replace(CJK_RUN, (run) => {
    if (SURROGATE.test(run)) {
      // A character outside the BMP (Han extensions B and later) is two code units: split by code point.
      const chars = [...run];
      for (let i = 0; i + 1 < chars.length; i++) add(chars[i] + chars[i + 1]);
      add(chars[chars.length - 1]);
      tokens += chars.length;
    } else {
      // One code unit a character: bigrams are two-unit slices (flat strings, no array of characters).
      const n = run.length;
      for (let i = 0; i + 1 < n; i++) add(run.slice(i, i + 2));
      add(run[n - 1]);
      tokens += n;
    }
    position++; // the next run does not continue this one
    return ' ';
  });
  let vector = '';
  for (const [lexeme, at] of positions) vector += `${vector ? ' ' : ''}'${lexeme}':${at.join(',')}`;
  return { rest, vector, tokens };
}

const SINGLE_CJK_LEXEME = /'([\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc])'(?!:)/gu;
const SINGLE_CJK = /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc]$/u;

/** A lexeme that is one CJK character, which the index holds only as the start of bigrams (or a run's end). */
export function isSingleCjk(lexeme: string): boolean {
  return SINGLE_CJK.test(lexeme);
}

/** A tsquery's text with every one-character CJK lexeme made a prefix (`'盐'` → `'盐':*`), to match bigrams. */
export function cjkPrefixQuery(tsquery: string): string {
  return tsquery.replace(SINGLE_CJK_LEXEME, "'$1':*");
}

/** A query word in its indexed form: one character stays itself, two or more become a phrase of their bigrams. */
export function cjkWordQuery(word: string): string {
  const chars = [...word];
  if (chars.length <= 2) return word;
  const grams: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) grams.push(chars[i] + chars[i + 1]);
  return `"${grams.join(' ')}"`;
}

/** Words of a query unit that holds CJK text, by ICU's dictionary segmentation (short strings only). */
export function segmentWords(text: string): string[] {
  const seg = new Intl.Segmenter('zh', { granularity: 'word' });
  const out: string[] = [];
  for (const s of seg.segment(text)) if (s.isWordLike) out.push(s.segment);
  return out;
}

/** A phrase's CJK runs as bigram runs (no single characters), so the phrase stays a phrase over the index. */
export function cjkPhraseText(text: string): string {
  return text
    .replace(CJK_RUN, (run) => {
      const chars = [...run];
      if (chars.length <= 2) return ` ${run} `;
      const grams: string[] = [];
      for (let i = 0; i + 1 < chars.length; i++) grams.push(chars[i] + chars[i + 1]);
      return ` ${grams.join(' ')} `;
    })
    .replace(/\s+/g, ' ')
    .trim();
}
