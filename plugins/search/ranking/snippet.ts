// Pure shaping of ts_headline output into a one-line snippet with matches in «»: whitespace
// flattened, cut to a budget around the first match, markers kept balanced. No SQL here.

export function shapeSnippet(headline: string | null | undefined, maxChars: number): string | null {
  if (!headline || !headline.includes('«')) return null;
  let text = headline.replace(/\s+/g, ' ').trim();
  if (text.length > maxChars) {
    const first = text.indexOf('«');
    let start = Math.max(0, Math.min(first - Math.floor(maxChars / 4), text.length - maxChars));
    if (start > 0) {
      const space = text.lastIndexOf(' ', start);
      start = space > 0 && start - space < 20 ? space + 1 : start;
    }
    let end = Math.min(text.length, start + maxChars);
    if (end < text.length) {
      const space = text.lastIndexOf(' ', end);
      if (space > start + maxChars / 2) end = space;
    }
    text = `${start > 0 ? '…' : ''}${text.slice(start, end).trim()}${end < text.length ? '…' : ''}`;
  }
  const opens = (text.match(/«/g) ?? []).length;
  const closes = (text.match(/»/g) ?? []).length;
  if (opens > closes) text = text.replace(/«([^«»]*)$/, '$1');
  text = text.replace(/^([^«]*)»/, '$1');
  return text;
}

/**
 * A snippet for a CJK query, which ts_headline cannot mark (the stored body keeps its runs whole): a window
 * around the first occurrence of the longest CJK word, every occurrence of the query's CJK words marked «».
 */
export function cjkSnippet(body: string, words: readonly string[], maxChars: number): string | null {
  const cjkWords = [...new Set(words.filter((w) => /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u.test(w)))].sort((a, b) => b.length - a.length);
  const text = body.replace(/\s+/g, ' ').trim();
  let at = -1;
  for (const w of cjkWords) {
    at = text.indexOf(w);
    if (at >= 0) break;
  }
  if (at < 0) return null;
  const start = Math.max(0, at - Math.floor(maxChars / 4));
  const end = Math.min(text.length, start + Math.floor(maxChars * 0.8));
  const escaped = cjkWords.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const marked = text.slice(start, end).replace(new RegExp(escaped.join('|'), 'g'), (m) => `«${m}»`);
  return shapeSnippet(`${start > 0 ? '…' : ''}${marked}${end < text.length ? '…' : ''}`, maxChars);
}
