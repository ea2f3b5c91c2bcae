// A note's line-ending style, and an edit result brought back to it: agents send LF, and a CRLF note
// spliced with LF text ends up with mixed endings. Pure; it never changes a note whose style is mixed.

export type LineEndingStyle = 'lf' | 'crlf' | 'mixed' | 'none';

/** How the note ends its lines: only CRLF, only LF, both (or lone CR), or it has a single line. */
export function lineEndingStyle(text: string): LineEndingStyle {
  let crlf = 0;
  let other = 0;
  for (let i = text.indexOf('\r'); i !== -1; i = text.indexOf('\r', i + 1)) {
    if (text.charCodeAt(i + 1) === 10) crlf++;
    else other++;
  }
  let lf = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lf++;
  const loneLf = lf - crlf;
  if (other > 0 || (crlf > 0 && loneLf > 0)) return 'mixed';
  if (crlf > 0) return 'crlf';
  return loneLf > 0 ? 'lf' : 'none';
}

/**
 * `after` (an edit of `before`) in `before`'s style: a CRLF note gets CRLF for every LF the edit brought in.
 * LF and mixed notes, and notes of one line, are returned as the edit made them.
 */
export function keepLineEndings(before: string, after: string): string {
  if (lineEndingStyle(before) !== 'crlf' || !after.includes('\n')) return after;
  return after.replace(/\r?\n/g, '\r\n');
}
