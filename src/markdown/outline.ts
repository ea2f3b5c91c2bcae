// The outline (ATX headings with #N ordinals, Parent/Child paths, section byte ranges) and resolveSection.
// Pure: resolveSection reads only the model it is given; it never guesses between ambiguous headings.
import type { Heading, NoteModel, SectionResolution } from './types.js';
import type { SourceText } from './source-text.js';
import type { RawHeading } from './structure.js';

/** Internal outline entry: the public Heading plus UTF-16 positions used by later passes. */
export interface OutlineEntry {
  heading: Heading;
  lineStartIndex: number;
  ownEndIndex: number;
  /** UTF-16 index where the section body starts (line after the heading). */
  bodyStartIndex: number;
  /** Texts of the enclosing headings and this one, outermost first. */
  chain: string[];
}

export function buildOutline(raw: RawHeading[], src: SourceText, bodyStartIndex: number): OutlineEntry[] {
  const n = raw.length;
  const len = src.text.length;
  const starts = raw.map((h) => Math.max(src.lineStarts[h.lineIndex], bodyStartIndex));
  // Section end: next heading of depth <= this one; a monotonic stack keeps this linear for 100k headings.
  const bodyEndIndex = new Array<number>(n).fill(len);
  const open: number[] = [];
  for (let i = 0; i < n; i++) {
    while (open.length > 0 && raw[open[open.length - 1]].depth >= raw[i].depth) bodyEndIndex[open.pop()!] = starts[i];
    open.push(i);
  }
  const chain: number[] = [];
  const parents = new Array<number>(n);
  const paths = new Array<string>(n);
  const chains = new Array<string[]>(n);
  for (let i = 0; i < n; i++) {
    while (chain.length > 0 && raw[chain[chain.length - 1]].depth >= raw[i].depth) chain.pop();
    parents[i] = chain.length > 0 ? chain[chain.length - 1] : -1;
    paths[i] = parents[i] === -1 ? raw[i].text : `${paths[parents[i]]}/${raw[i].text}`;
    chain.push(i);
    chains[i] = chain.map((c) => raw[c].text);
  }
  const siblingCount = new Map<string, number>();
  const key = (i: number): string => `${parents[i]}\u0000${raw[i].text}`;
  for (let i = 0; i < n; i++) siblingCount.set(key(i), (siblingCount.get(key(i)) ?? 0) + 1);

  const out: OutlineEntry[] = [];
  for (let i = 0; i < n; i++) {
    const li = raw[i].lineIndex;
    const bodyStart = li + 1 < src.lineCount ? src.lineStarts[li + 1] : len;
    const ownEndIndex = i + 1 < n ? starts[i + 1] : len;
    const bStart = src.byte(bodyStart);
    const bEnd = src.byte(Math.max(bodyStart, bodyEndIndex[i]));
    out.push({
      lineStartIndex: starts[i],
      ownEndIndex,
      bodyStartIndex: bodyStart,
      chain: chains[i],
      heading: {
        ordinal: i + 1,
        depth: raw[i].depth,
        text: raw[i].text,
        path: paths[i],
        line: li + 1,
        start: src.byte(starts[i]),
        end: src.byte(src.lineEnds[li]),
        bodyStart: bStart,
        bodyEnd: bEnd,
        ownEnd: src.byte(ownEndIndex),
        size: bEnd - bStart,
        duplicateSibling: (siblingCount.get(key(i)) ?? 0) > 1,
      },
    });
  }
  return out;
}

/** Enclosing heading ordinals of each heading (outermost first), derived from depths. */
function ancestors(outline: Heading[]): number[][] {
  const chain: Heading[] = [];
  return outline.map((h) => {
    while (chain.length > 0 && chain[chain.length - 1].depth >= h.depth) chain.pop();
    const result = chain.map((c) => c.ordinal);
    chain.push(h);
    return result;
  });
}

/**
 * Resolve a section selector: a bare `#N` is always the ordinal; a selector with `/` is a `Parent/Child`
 * path whose earlier parts must appear, in order, among the target's enclosing headings; anything else is
 * exact (trimmed, case-sensitive) heading text. Ambiguity lists the candidates instead of picking one.
 */
export function resolveSection(model: Pick<NoteModel, 'outline'>, selector: string): SectionResolution {
  const outline = model.outline;
  const sel = selector.trim();
  const ordinal = /^#(\d+)$/.exec(sel);
  if (ordinal) {
    const n = Number(ordinal[1]);
    const h = outline[n - 1];
    return h && n >= 1 ? { ok: true, heading: h } : { ok: false, code: 'section_not_found', candidates: outline };
  }
  let matches: Heading[];
  if (sel.includes('/')) {
    const parts = sel.split('/').map((p) => p.trim());
    const target = parts[parts.length - 1];
    const before = parts.slice(0, -1);
    const anc = ancestors(outline);
    matches = outline.filter(
      (h, i) =>
        h.text === target &&
        isSubsequence(
          before,
          anc[i].map((o) => outline[o - 1].text),
        ),
    );
    // A heading whose own text contains `/` is still reachable by its full text.
    if (matches.length === 0) matches = outline.filter((h) => h.text === sel || h.path === sel);
  } else {
    matches = outline.filter((h) => h.text === sel);
  }
  if (matches.length === 1) return { ok: true, heading: matches[0] };
  if (matches.length === 0) return { ok: false, code: 'section_not_found', candidates: outline };
  return { ok: false, code: 'section_ambiguous', candidates: matches };
}

function isSubsequence(needle: string[], hay: string[]): boolean {
  let j = 0;
  for (let i = 0; i < hay.length && j < needle.length; i++) if (hay[i] === needle[j]) j++;
  return j === needle.length;
}
