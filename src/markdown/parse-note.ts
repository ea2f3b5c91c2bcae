// parseNote: bytes or text of one note -> NoteModel (frontmatter, outline, links, tags, tasks, chunks).
// Pure and deterministic: no I/O, no clock, and it never throws; whatever it survives goes in `problems`.
import type { NoteModel, NoteTag, ParseNoteOptions, Task } from './types.js';
import { decodeNote, maskText, mergeRanges, SourceText } from './source-text.js';
import { aliasesFrom, DEFAULT_MAX_FRONTMATTER_BYTES, scanFrontmatter, titleFrom } from './frontmatter.js';
import { scanStructure } from './structure.js';
import { scanMasks } from './masks.js';
import { buildOutline, type OutlineEntry } from './outline.js';
import { scanLinks } from './links.js';
import { frontmatterTags, inlineTags, urlRanges } from './tags.js';
import { matchTaskLine, parseTask } from './tasks.js';
import { buildChunks, DEFAULT_CHUNK_OVERLAP, DEFAULT_CHUNK_TOKENS, type ChunkSection } from './chunks.js';

const BLOCK_ID = /(?:^|[ \t])\^([A-Za-z0-9-]+)[ \t]*$/gm;

export function parseNote(input: string | Uint8Array, options: ParseNoteOptions): NoteModel {
  try {
    return parseNoteUnguarded(input, options);
  } catch (e) {
    // A bug must not take the index down with it: degrade to an empty model that says why.
    return emptyModel(options.path, `parser_error: ${e instanceof Error ? e.message.slice(0, 200) : String(e)}`);
  }
}

function parseNoteUnguarded(input: string | Uint8Array, options: ParseNoteOptions): NoteModel {
  const decoded = decodeNote(input);
  const problems = [...decoded.problems];
  const src = new SourceText(decoded.text);
  const text = src.text;

  const fm = scanFrontmatter(src, positiveOr(options.maxFrontmatterBytes, DEFAULT_MAX_FRONTMATTER_BYTES));
  const bodyStart = fm.bodyStartIndex;
  const structure = scanStructure(src, bodyStart);
  problems.push(...structure.problems);
  const masks = scanMasks(text, bodyStart, structure.code);
  const masked = maskText(text, masks.inert);

  const outline = buildOutline(structure.headings, src, bodyStart);
  const headingPathAt = headingLookup(outline);

  const links = scanLinks(src, masked, bodyStart, fm.present ? { start: fm.yamlStart, end: fm.yamlEnd } : null);
  const tagMasked = maskText(
    masked,
    mergeRanges([...structure.html, ...links.ranges, ...urlRanges(masked, bodyStart)]),
  );
  const bodyTags = inlineTags(src, tagMasked, bodyStart);
  const tags: NoteTag[] = [...frontmatterTags(fm.data), ...bodyTags];

  const blockIds: NoteModel['blockIds'] = [];
  const blockRe = new RegExp(BLOCK_ID.source, 'gm');
  blockRe.lastIndex = bodyStart;
  for (let m = blockRe.exec(masked); m; m = blockRe.exec(masked)) {
    const caret = m.index + m[0].indexOf('^');
    blockIds.push({ id: m[1], line: src.line(caret), start: src.byte(caret) });
    if (m[0].length === 0) blockRe.lastIndex++;
  }

  const tasks = scanTasks(src, masked, bodyStart, headingPathAt, bodyTags);

  const title = titleFrom(fm.data) ?? stem(options.path);
  const sections: ChunkSection[] = [];
  const firstHeading = outline.length > 0 ? outline[0].lineStartIndex : text.length;
  sections.push({ sectionOrdinal: 0, headingPath: '', prefixParts: [title], start: bodyStart, end: firstHeading });
  for (const e of outline) {
    sections.push({
      sectionOrdinal: e.heading.ordinal,
      headingPath: e.heading.path,
      prefixParts: [title, ...e.chain],
      start: Math.min(e.bodyStartIndex, e.ownEndIndex),
      end: e.ownEndIndex,
    });
  }
  const chunks = buildChunks(src, sections, mergeRanges([...structure.blockCode, ...masks.comments]), {
    chunkTokens: positiveOr(options.chunkTokens, DEFAULT_CHUNK_TOKENS),
    chunkOverlap: nonNegativeOr(options.chunkOverlap, DEFAULT_CHUNK_OVERLAP),
  });

  return {
    path: options.path,
    title,
    aliases: aliasesFrom(fm.data),
    tags,
    frontmatter: {
      present: fm.present,
      text: fm.text,
      data: fm.data,
      ...(fm.error ? { error: fm.error } : {}),
      bodyStart: src.byte(bodyStart),
    },
    body: { start: src.byte(bodyStart), end: src.byte(text.length) },
    outline: outline.map((e) => e.heading),
    links: links.links,
    blockIds,
    tasks,
    chunks,
    wordCount: countWords(text, bodyStart),
    problems,
  };
}

function scanTasks(
  src: SourceText,
  masked: string,
  bodyStart: number,
  headingPathAt: (index: number) => string,
  tags: NoteTag[],
): Task[] {
  const tasks: Task[] = [];
  const first = bodyStart >= src.text.length ? src.lineCount : src.lineIndexOf(bodyStart);
  let t = 0;
  for (let li = first; li < src.lineCount; li++) {
    const start = src.lineStarts[li];
    const end = src.lineEnds[li];
    const c = masked.charCodeAt(start);
    // Cheap reject before the regex: a task line starts with indentation, `>`, a bullet or a digit.
    if (!(c === 32 || c === 9 || c === 62 || c === 45 || c === 42 || c === 43 || (c >= 48 && c <= 57))) continue;
    const head = matchTaskLine(masked.slice(start, Math.min(end, start + 4096)));
    if (!head) continue;
    const line = li + 1;
    while (t < tags.length && (tags[t].line ?? 0) < line) t++;
    const lineTags: string[] = [];
    for (let k = t; k < tags.length && tags[k].line === line; k++)
      if (!lineTags.includes(tags[k].tag)) lineTags.push(tags[k].tag);
    tasks.push(parseTask(src.text.slice(start, end), head, line, headingPathAt(start), lineTags));
  }
  return tasks;
}

/** Heading path in force at a UTF-16 index ('' before the first heading); expects increasing queries. */
function headingLookup(outline: OutlineEntry[]): (index: number) => string {
  let k = -1;
  return (index) => {
    while (k + 1 < outline.length && outline[k + 1].lineStartIndex <= index) k++;
    while (k >= 0 && outline[k].lineStartIndex > index) k--;
    return k >= 0 ? outline[k].heading.path : '';
  };
}

/** Words as Obsidian counts them, roughly: runs of letters/digits, and each CJK character on its own. */
function countWords(text: string, from: number): number {
  let n = 0;
  let inWord = false;
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (isCjk(c)) {
      n++;
      inWord = false;
    } else if (isWordUnit(c)) {
      if (!inWord) n++;
      inWord = true;
    } else inWord = false;
  }
  return n;
}

function isCjk(c: number): boolean {
  return (
    (c >= 0x3040 && c <= 0x30ff) ||
    (c >= 0x3400 && c <= 0x4dbf) ||
    (c >= 0x4e00 && c <= 0x9fff) ||
    (c >= 0xf900 && c <= 0xfaff) ||
    (c >= 0xd840 && c <= 0xd87f)
  );
}

function isWordUnit(c: number): boolean {
  if (c < 0x80)
    return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 39 || c === 45;
  if (c === 0x2019) return true; // ’ inside words
  // Spaces, general punctuation, CJK punctuation, full-width punctuation and emoji surrogates end a word.
  if (c === 0xa0 || (c >= 0x2000 && c <= 0x206f) || (c >= 0x3000 && c <= 0x303f) || (c >= 0xff00 && c <= 0xff0f))
    return false;
  if (
    (c >= 0xff1a && c <= 0xff20) ||
    (c >= 0xd83c && c <= 0xd83e) ||
    (c >= 0xdc00 && c <= 0xdfff) ||
    c === 0xfeff ||
    c === 0xfffd
  )
    return false;
  if ((c >= 0x2190 && c <= 0x2bff) || (c >= 0xfe00 && c <= 0xfe0f)) return false; // arrows, symbols, variation selectors
  return true;
}

/** File stem: the basename without its `.md` extension. */
export function stem(path: string): string {
  const base = path.slice(path.lastIndexOf('/') + 1);
  return base.replace(/\.md$/i, '');
}

function positiveOr(v: number | undefined, fallback: number): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : fallback;
}

function nonNegativeOr(v: number | undefined, fallback: number): number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : fallback;
}

function emptyModel(path: string, problem: string): NoteModel {
  return {
    path,
    title: stem(path),
    aliases: [],
    tags: [],
    frontmatter: { present: false, text: '', data: null, bodyStart: 0 },
    body: { start: 0, end: 0 },
    outline: [],
    links: [],
    blockIds: [],
    tasks: [],
    chunks: [],
    wordCount: 0,
    problems: [problem],
  };
}
