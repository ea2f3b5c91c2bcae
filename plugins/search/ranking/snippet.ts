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
