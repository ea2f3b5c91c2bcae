// Tags: frontmatter `tags`/`tag` in every shape Obsidian accepts, inline `#tags` by Obsidian's rules,
// and the case-insensitive tag identity. Never reads inside code, math, comments, HTML, links or URLs.
import type { JsonValue, NoteTag } from './types.js';
import type { SourceText } from './source-text.js';

// `#` at line start or after whitespace, then anything but whitespace and punctuation (`_`, `-` and the
// nesting `/` allowed): letters in any script, digits, emoji. Unicode punctuation (CJK, full-width) ends a tag.
const INLINE_TAG =
  /(?<![^\s])#((?:[^\s\u0000!-,.:-@[-^`{-~\u2000-\u206f\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65])+)/gu;
const URL = /(?:[a-z][a-z0-9+.-]*:\/\/|www\.)[^\s<>\u0000]+/gi;

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
        const display = part.replace(/^#+/, '').replace(/\/+$/, '');
        if (!validTag(display)) continue;
        out.push({ tag: tagIdentity(display), display, source: 'frontmatter' });
      }
    }
  }
  return out;
}

/** URL ranges in already-masked text; tags never start inside them. */
export function urlRanges(masked: string, from: number): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  const re = new RegExp(URL.source, 'gi');
  re.lastIndex = from;
  for (let m = re.exec(masked); m; m = re.exec(masked)) out.push({ start: m.index, end: m.index + m[0].length });
  return out;
}

/** Inline tags in `masked` (the whole text with every region tags ignore blanked) from `from` on. */
export function inlineTags(src: SourceText, masked: string, from: number): NoteTag[] {
  const out: NoteTag[] = [];
  const re = new RegExp(INLINE_TAG.source, 'gu');
  re.lastIndex = from;
  for (let m = re.exec(masked); m; m = re.exec(masked)) {
    const display = m[1].replace(/\/+$/, '');
    if (!validTag(display)) continue;
    out.push({ tag: tagIdentity(display), display, source: 'inline', line: src.line(m.index) });
  }
  return out;
}
