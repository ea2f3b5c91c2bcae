// Tags: frontmatter `tags`/`tag` in every shape Obsidian accepts, inline `#tags` by Obsidian's rules,
// and the case-insensitive tag identity. Never reads inside code, math, comments, HTML, links or URLs.
import type { JsonValue, NoteTag } from './types.js';
import type { SourceText } from './source-text.js';

// `#` at line start or after whitespace, then anything but whitespace and punctuation (`_`, `-` and the
// nesting `/` allowed): letters in any script, digits, emoji. Unicode punctuation (CJK, full-width) ends a tag.
const INLINE_TAG =
  /(?<![^\s])#((?:[^\s\u0000!-,.:-@[-^`{-~\u2000-\u206f\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65])+)/gu;

/** Case-insensitive identity of a tag, without its `#`. */
export function tagIdentity(tag: string): string {
  return tag.replace(/^#+/, '').normalize('NFC').toLowerCase();
}

/** A tag body is valid when it is not purely numeric (nested `/` parts aside). */
function validTag(body: string): boolean {
  return body !== '' && /[^\d/]/.test(body);
}

export function frontmatterTags(data: { [key: string]: JsonValue } | null): NoteTag[] {
  if (!data) return [];
  const out: NoteTag[] = [];
  for (const key of ['tags', 'tag']) {
    const v = data[key];
    const items: JsonValue[] = Array.isArray(v) ? v : v === null || v === undefined ? [] : [v];
    for (const item of items) {
      if (typeof item !== 'string' && typeof item !== 'number') continue;
      // A string may hold several tags separated by commas and/or spaces.
      for (const part of String(item).split(/[,\s]+/)) {
        const display = trimTrailingSlashes(part.replace(/^#+/, ''));
        if (!validTag(display)) continue;
        out.push({ tag: tagIdentity(display), display, source: 'frontmatter' });
      }
    }
  }
  return out;
}

/**
 * URL ranges in already-masked text; tags never start inside them. A URL is what the pattern
 * `/(?:[a-z][a-z0-9+.-]*:\/\/|www\.)[^\s<>\u0000]+/gi` matches, found by a hand scanner instead: that
 * pattern retries the scheme run from every letter of it, so a long word without `://` cost its length
 * squared (64 KiB of letters took 1.8 s). Here each scheme run is measured once, which keeps it linear.
 */
export function urlRanges(masked: string, from: number): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  const n = masked.length;
  // [runStart, runEnd): a run of scheme characters already measured; positions inside share its end.
  let runStart = -1;
  let runEnd = -1;
  const schemeRunEnd = (k: number): number => {
    if (k >= runStart && k < runEnd) return runEnd;
    let e = k;
    while (e < n && isSchemeChar(masked.charCodeAt(e))) e++;
    runStart = k;
    runEnd = e;
    return e;
  };
  let i = from;
  while (i < n) {
    const c = masked.charCodeAt(i);
    let tail = -1;
    if (isAsciiLetter(c)) {
      const e = schemeRunEnd(i + 1);
      if (masked.startsWith('://', e) && isUrlChar(masked.charCodeAt(e + 3))) tail = e + 3;
    }
    if (
      tail < 0 &&
      (c === 0x77 || c === 0x57) &&
      /^www\.$/i.test(masked.slice(i, i + 4)) &&
      isUrlChar(masked.charCodeAt(i + 4))
    )
      tail = i + 4;
    if (tail < 0) {
      i++;
      continue;
    }
    let end = tail;
    while (end < n && isUrlChar(masked.charCodeAt(end))) end++;
    out.push({ start: i, end });
    i = end;
  }
  return out;
}

function isAsciiLetter(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
}

/** `[a-z0-9+.-]` under the `i` flag. */
function isSchemeChar(c: number): boolean {
  return isAsciiLetter(c) || (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2e || c === 0x2d;
}

/** `[^\s<>\u0000]`: JavaScript's white space and line terminators, `<`, `>`, NUL and the text's end (NaN) end a URL. */
function isUrlChar(c: number): boolean {
  if (Number.isNaN(c) || c === 0x3c || c === 0x3e || c === 0) return false;
  if (c <= 0x20) return !(c === 0x20 || (c >= 0x09 && c <= 0x0d));
  if (c < 0xa0) return true;
  return !(
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** `s` without its trailing `/` characters (a loop: `/\/+$/` retries the run from each slash, quadratic). */
export function trimTrailingSlashes(s: string): string {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 0x2f) end--;
  return end === s.length ? s : s.slice(0, end);
}

/** Inline tags in `masked` (the whole text with every region tags ignore blanked) from `from` on. */
export function inlineTags(src: SourceText, masked: string, from: number): NoteTag[] {
  const out: NoteTag[] = [];
  const re = new RegExp(INLINE_TAG.source, 'gu');
  re.lastIndex = from;
  for (let m = re.exec(masked); m; m = re.exec(masked)) {
    const display = trimTrailingSlashes(m[1]);
    if (!validTag(display)) continue;
    out.push({ tag: tagIdentity(display), display, source: 'inline', line: src.line(m.index) });
  }
  return out;
}
