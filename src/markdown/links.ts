// Link extraction: wikilinks, embeds and markdown links to local files, with verbatim raw text and byte offsets.
// Scans code/math/comment-masked text only; never resolves targets (that is resolve-link.ts).
import type { Link } from './types.js';
import type { Range, SourceText } from './source-text.js';

const WIKILINK = /(!?)\[\[([^[\]\r\n\u0000]+?)\]\]/g;
const MD_LINK =
  /(!?)\[((?:[^[\]\r\n\u0000]|\[[^[\]\r\n\u0000]{0,1000}\]){0,1000})\]\([ \t]*(<[^<>\r\n\u0000]*>|(?:[^\s()\\\u0000]|\\[^\s]|\([^\s()\u0000]*\))+)(?:[ \t]+(?:"[^"\r\n]*"|'[^'\r\n]*'|\([^()\r\n]*\)))?[ \t]*\)/g;
const SCHEME = /^[a-z][a-z0-9+.-]*:/i;
// Label lengths are bounded so a long line full of `[` stays linear instead of rescanning to its end.

export interface LinkScan {
  links: Link[];
  /** UTF-16 ranges of every link found (tags never start inside one). */
  ranges: Range[];
}

/**
 * `masked` is the whole text with inert regions blanked; `yaml` is the frontmatter source range, whose
 * wikilinks count (inFrontmatter) but whose markdown-looking text does not.
 */
export function scanLinks(src: SourceText, masked: string, bodyStartIndex: number, yaml: Range | null): LinkScan {
  const links: Link[] = [];
  const ranges: Range[] = [];
  const text = src.text;
  const wiki = (from: number, to: number, inFrontmatter: boolean): void => {
    const re = new RegExp(WIKILINK.source, 'g');
    re.lastIndex = from;
    for (let m = re.exec(masked); m && m.index < to; m = re.exec(masked)) {
      const end = m.index + m[0].length;
      if (end > to) break;
      const link = wikilink(m[1] === '!', m[2]);
      if (!link) continue;
      ranges.push({ start: m.index, end });
      links.push({ ...link, raw: text.slice(m.index, end), ...place(src, m.index, end), inFrontmatter });
    }
  };
  if (yaml) wiki(yaml.start, yaml.end, true);
  wiki(bodyStartIndex, text.length, false);

  const wikiRanges = ranges.slice();
  const re = new RegExp(MD_LINK.source, 'g');
  re.lastIndex = bodyStartIndex;
  let w = 0;
  for (let m = re.exec(masked); m; m = re.exec(masked)) {
    const start = m.index;
    const end = start + m[0].length;
    while (w < wikiRanges.length && wikiRanges[w].end <= start) w++;
    if (w < wikiRanges.length && wikiRanges[w].start < end) continue;
    const link = markdownLink(m[1] === '!', m[2], m[3]);
    if (!link) continue;
    ranges.push({ start, end });
    links.push({ ...link, raw: text.slice(start, end), ...place(src, start, end), inFrontmatter: false });
  }
  links.sort((a, b) => a.start - b.start);
  ranges.sort((a, b) => a.start - b.start);
  return { links, ranges };
}

type LinkCore = Omit<Link, 'raw' | 'start' | 'end' | 'line' | 'inFrontmatter'>;

function place(src: SourceText, start: number, end: number): { start: number; end: number; line: number } {
  return { start: src.byte(start), end: src.byte(end), line: src.line(start) };
}

/** Parse the inside of `[[…]]`: `target#anchor|alias`, `target#^block`, `#heading`. */
export function wikilink(embed: boolean, inner: string): LinkCore | null {
  const pipe = inner.indexOf('|');
  let targetPart = pipe >= 0 ? inner.slice(0, pipe) : inner;
  // Inside a table `|` is written `\|`; the backslash belongs to the escape, not the target.
  if (pipe >= 0 && targetPart.endsWith('\\')) targetPart = targetPart.slice(0, -1);
  const alias = pipe >= 0 ? inner.slice(pipe + 1).trim() : undefined;
  const hash = targetPart.indexOf('#');
  const target = (hash >= 0 ? targetPart.slice(0, hash) : targetPart).trim();
  const fragment = hash >= 0 ? targetPart.slice(hash + 1).trim() : undefined;
  if (target === '' && !fragment) return null;
  return {
    kind: embed ? 'embed' : 'wikilink',
    embed,
    target,
    ...fragmentFields(fragment),
    ...(alias !== undefined && alias !== '' ? { alias } : {}),
  };
}

function fragmentFields(fragment: string | undefined): { anchor?: string; blockRef?: string } {
  if (fragment === undefined || fragment === '') return {};
  if (fragment.startsWith('^')) return { blockRef: fragment.slice(1) };
  return { anchor: fragment };
}

/** A markdown link or image whose destination is a local file (no URL scheme, not a bare `#anchor`). */
export function markdownLink(embed: boolean, label: string, destination: string): LinkCore | null {
  let dest = destination.trim();
  if (dest.startsWith('<') && dest.endsWith('>')) dest = dest.slice(1, -1).trim();
  dest = dest.replace(/\\([!-/:-@[-`{-~])/g, '$1');
  if (dest === '' || dest.startsWith('#') || SCHEME.test(dest) || dest.startsWith('//')) return null;
  const hash = dest.indexOf('#');
  const pathPart = hash >= 0 ? dest.slice(0, hash) : dest;
  const fragment = hash >= 0 ? percentDecode(dest.slice(hash + 1)) : undefined;
  const target = percentDecode(pathPart);
  if (target === '') return null;
  return {
    kind: 'markdown',
    embed,
    target,
    ...fragmentFields(fragment),
    ...(label.trim() !== '' ? { alias: label.trim() } : {}),
  };
}

function percentDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
