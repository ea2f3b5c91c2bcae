// Decoding and position bookkeeping for one note: UTF-16 index -> UTF-8 byte offset, line numbers, masks.
// Never reads files or throws on bad input; callers work in string indices and convert at the edge.

export interface DecodedText {
  text: string;
  problems: string[];
}

const BOM = 0xfeff;

/** Decode bytes as UTF-8 keeping a BOM (so offsets match the file); invalid bytes become U+FFFD and a problem. */
export function decodeNote(input: string | Uint8Array): DecodedText {
  if (typeof input === 'string') return { text: input, problems: [] };
  try {
    return { text: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(input), problems: [] };
  } catch {
    return {
      text: new TextDecoder('utf-8', { fatal: false, ignoreBOM: true }).decode(input),
      problems: [
        'invalid_utf8: bytes that are not UTF-8 were replaced with U+FFFD; byte offsets refer to the re-encoded text',
      ],
    };
  }
}

export function hasBom(text: string): boolean {
  return text.length > 0 && text.charCodeAt(0) === BOM;
}

/** Position tables for one text. */
export class SourceText {
  readonly text: string;
  /** UTF-16 index of each line's first character. */
  readonly lineStarts: number[];
  /** UTF-16 index where each line's content ends (terminator excluded). */
  readonly lineEnds: number[];
  private readonly byteMap: Uint32Array | null;

  constructor(text: string) {
    this.text = text;
    const starts = [0];
    const ends: number[] = [];
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 10 || c === 13) {
        ends.push(i);
        if (c === 13 && text.charCodeAt(i + 1) === 10) i++;
        starts.push(i + 1);
      }
    }
    ends.push(text.length);
    this.lineStarts = starts;
    this.lineEnds = ends;
    this.byteMap = isAscii(text) ? null : buildByteMap(text);
  }

  get lineCount(): number {
    return this.lineStarts.length;
  }

  /** UTF-8 byte offset of a UTF-16 index (index may equal text.length). */
  byte(index: number): number {
    return this.byteMap === null ? index : this.byteMap[index];
  }

  /** 0-based line index containing a UTF-16 index. */
  lineIndexOf(index: number): number {
    const s = this.lineStarts;
    let lo = 0;
    let hi = s.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (s[mid] <= index) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** 1-based line number of a UTF-16 index. */
  line(index: number): number {
    return this.lineIndexOf(index) + 1;
  }

  lineText(lineIndex: number): string {
    return this.text.slice(this.lineStarts[lineIndex], this.lineEnds[lineIndex]);
  }
}

function isAscii(text: string): boolean {
  // eslint-disable-next-line no-control-regex
  return !/[^\x00-\x7f]/.test(text);
}

function buildByteMap(text: string): Uint32Array {
  const map = new Uint32Array(text.length + 1);
  let b = 0;
  for (let i = 0; i < text.length; i++) {
    map[i] = b;
    const c = text.charCodeAt(i);
    if (c < 0x80) b += 1;
    else if (c < 0x800) b += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        map[i + 1] = b;
        b += 4;
        i++;
      } else b += 3;
    } else b += 3;
  }
  map[text.length] = b;
  return map;
}

/** Half-open UTF-16 range [start, end). */
export interface Range {
  start: number;
  end: number;
}

/** Sort and merge overlapping or touching ranges. */
export function mergeRanges(ranges: Range[]): Range[] {
  const sorted = ranges.filter((r) => r.end > r.start).sort((a, b) => a.start - b.start);
  const out: Range[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r.start <= last.end) last.end = Math.max(last.end, r.end);
    else out.push({ start: r.start, end: r.end });
  }
  return out;
}

/** Replace masked ranges by NUL (line terminators kept) so scanners keep positions but never match inside. */
export function maskText(text: string, ranges: Range[]): string {
  if (ranges.length === 0) return text;
  const parts: string[] = [];
  let pos = 0;
  for (const r of ranges) {
    if (r.start > pos) parts.push(text.slice(pos, r.start));
    const from = Math.max(pos, r.start);
    if (r.end > from) parts.push(text.slice(from, r.end).replace(/[^\r\n]/g, '\u0000'));
    pos = Math.max(pos, r.end);
  }
  if (pos < text.length) parts.push(text.slice(pos));
  return parts.join('');
}

/** True when [start, end) overlaps any of the merged, sorted ranges. */
export function overlapsAny(ranges: Range[], start: number, end: number): boolean {
  let lo = 0;
  let hi = ranges.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ranges[mid].end <= start) lo = mid + 1;
    else hi = mid;
  }
  return lo < ranges.length && ranges[lo].start < end;
}
