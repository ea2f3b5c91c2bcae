// Pure snippet making and shaping: a one-line snippet with matches in «», whitespace
// flattened, cut to a budget around the first match, markers kept balanced. No SQL here.

/** Text as a literal inside a RegExp. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

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
  const cjkWords = [
    ...new Set(words.filter((w) => /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u.test(w))),
  ].sort((a, b) => b.length - a.length);
  const text = body.replace(/\s+/g, ' ').trim();
  let at = -1;
  for (const w of cjkWords) {
    at = text.indexOf(w);
    if (at >= 0) break;
  }
  if (at < 0) return null;
  const start = Math.max(0, at - Math.floor(maxChars / 4));
  const end = Math.min(text.length, start + Math.floor(maxChars * 0.8));
  const escaped = cjkWords.map(escapeRegExp);
  const marked = text.slice(start, end).replace(new RegExp(escaped.join('|'), 'g'), (m) => `«${m}»`);
  return shapeSnippet(`${start > 0 ? '…' : ''}${marked}${end < text.length ? '…' : ''}`, maxChars);
}

const HAS_CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/**
 * A snippet from a window of a note's text, built here instead of by ts_headline (which re-parsed the window with
 * the whole query and was most of a long question's time): the stretch of `maxChars` that starts a word with the
 * most distinct query terms (lexemes, which are word stems, and the query's own words), every such word marked «».
 * A stem that is not a prefix of its words (`polici`) is matched through the query's own word (`policies`).
 */
export function termSnippet(text: string, terms: readonly string[], maxChars: number): string | null {
  const list = [...new Set(terms.map((t) => t.toLowerCase()).filter((t) => t.length >= 2 && !HAS_CJK.test(t)))].sort(
    (a, b) => b.length - a.length,
  );
  if (!list.length || !text) return null;
  const flat = text.replace(/\s+/g, ' ').trim();
  const re = new RegExp(`(?<![\\p{L}\\p{N}])(?:${list.map(escapeRegExp).join('|')})[\\p{L}\\p{N}]*`, 'giu');
  const hits: Array<{ at: number; end: number; key: string }> = [];
  for (const m of flat.matchAll(re)) {
    const low = m[0].toLowerCase();
    hits.push({ at: m.index ?? 0, end: (m.index ?? 0) + m[0].length, key: list.find((t) => low.startsWith(t)) ?? low });
  }
  if (!hits.length) return null;
  // The window holding the most distinct terms (the first such), a quarter of it before its first hit.
  const span = Math.floor(maxChars * 0.75);
  let best = 0;
  let bestCount = 0;
  for (let i = 0; i < hits.length; i++) {
    const keys = new Set<string>();
    for (let j = i; j < hits.length && hits[j].end - hits[i].at <= span; j++) keys.add(hits[j].key);
    if (keys.size > bestCount) {
      bestCount = keys.size;
      best = i;
    }
  }
  let start = Math.max(0, hits[best].at - Math.floor(maxChars / 4));
  const space = start > 0 ? flat.indexOf(' ', start) : -1;
  if (space >= 0 && space - start < 20 && space < hits[best].at) start = space + 1;
  const end = Math.min(flat.length, start + maxChars + 40);
  let out = '';
  let pos = start;
  for (const h of hits) {
    if (h.at < start || h.end > end) continue;
    out += `${flat.slice(pos, h.at)}«${flat.slice(h.at, h.end)}»`;
    pos = h.end;
  }
  out += flat.slice(pos, end);
  return shapeSnippet(`${start > 0 ? '…' : ''}${out}${end < flat.length ? '…' : ''}`, maxChars);
}
