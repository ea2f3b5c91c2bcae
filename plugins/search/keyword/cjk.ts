// CJK text for the keyword index and its queries: PostgreSQL's parser keeps a run of Han, kana or hangul as one
// token, so a substring of it could never match. Pure string work; no SQL, no I/O, no ICU call on note text.

/** A run of Chinese, Japanese or Korean characters (the scripts the default ts parser cannot split). */
const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc]+/gu;
const HAS_CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

export function hasCjk(text: string): boolean {
  return HAS_CJK.test(text);
}

/**
 * The indexed form of a text: every CJK run becomes its overlapping character bigrams (in order, so adjacent
 * bigrams sit at adjacent positions and a longer word matches as a phrase of them), then its last character.
 * A one-character word (such as 盐) is matched as a prefix (`盐:*`, see cjkPrefixQuery): every occurrence of a
 * character starts a bigram or ends its run, so the prefix finds each one. Indexing every character as well
 * doubled a Chinese note's positions and added a GIN entry per distinct character, for no match bigrams miss.
 * Other text is left as it is.
 * Notes are not run through Intl.Segmenter: ICU's iterator measured ~1.3 µs a character per run and superlinear
 * on long strings, and bigrams already match every word a segmenter would find, however it splits the note.
 */
export function cjkIndexText(text: string): string {
  if (!hasCjk(text)) return text;
  return text.replace(CJK_RUN, (run) => {
    const chars = [...run];
    if (chars.length === 1) return ` ${run} `;
    const parts: string[] = [];
    for (let i = 0; i + 1 < chars.length; i++) parts.push(chars[i] + chars[i + 1]);
    parts.push(chars[chars.length - 1]);
    return ` ${parts.join(' ')} `;
  });
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
