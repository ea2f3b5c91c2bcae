// Loading notes for the tools: path normalisation, one strict UTF-8 read, its hash and its NoteModel.
// Reads only through ctx.vault.fs; never writes, and never guesses a path the caller did not name.
import { parseNote, type NoteModel, type ParseNoteOptions } from '../../../src/markdown/index.js';
import { obsidianLink } from '../../../src/sdk/index.js';
import type { NotesCtx } from '../settings.js';

export interface LoadedNote {
  path: string;
  text: string;
  bytes: Buffer;
  hash: string;
  model: NoteModel;
  size: number;
  mtimeMs: number;
}

/** Notes are `.md` files: add the extension when the caller left it off (case-insensitively present is kept). */
export function notePath(ctx: NotesCtx, input: string): string {
  const p = /\.md$/i.test(input) ? input : `${input}.md`;
  return ctx.vault.fs.checkPath(p);
}

function parseOptions(ctx: NotesCtx, path: string): ParseNoteOptions {
  return { path, maxFrontmatterBytes: ctx.settings.notes.maxFrontmatterBytes };
}

/** Parse in the worker pool (notes over notes.inlineParseMaxBytes: their parse must not hold the event loop). */
async function parseInPool(ctx: NotesCtx, path: string, bytes: Uint8Array): Promise<NoteModel> {
  const [model] = await ctx.workers.run<NoteModel[]>('parse-notes', [{ ...parseOptions(ctx, path), bytes }], {
    signal: ctx.signal,
  });
  return model;
}

/** A note's model: on this thread up to notes.inlineParseMaxBytes, in the worker pool beyond. */
export async function parseNoteBounded(ctx: NotesCtx, path: string, text: string): Promise<NoteModel> {
  const size = Buffer.byteLength(text, 'utf8');
  if (size <= ctx.settings.notes.inlineParseMaxBytes) return parseNote(text, parseOptions(ctx, path));
  return parseInPool(ctx, path, Buffer.from(text, 'utf8'));
}

/**
 * Read one note (strict UTF-8, capped). A small note's model is parsed on first use, on this thread: an
 * append, a find/replace or a hash check never needs it. A note over notes.inlineParseMaxBytes is parsed
 * now, in the worker pool, so no note-sized parse runs on the event loop. Refusals come from the vault core.
 */
export async function loadNote(
  ctx: NotesCtx,
  path: string,
  maxBytes = ctx.settings.notes.read.maxNoteBytes,
): Promise<LoadedNote> {
  const { text, mtimeMs } = await ctx.vault.fs.readTextWithStat(path, { maxBytes });
  const bytes = Buffer.from(text, 'utf8');
  let model: NoteModel | undefined =
    bytes.length > ctx.settings.notes.inlineParseMaxBytes ? await parseInPool(ctx, path, bytes) : undefined;
  return {
    path,
    text,
    bytes,
    hash: ctx.vault.fs.contentHash(bytes),
    get model() {
      model ??= parseNote(text, parseOptions(ctx, path));
      return model;
    },
    size: bytes.length,
    mtimeMs,
  };
}

/** A present, closed block, parsed or too large to parse (its extent is known either way). */
export function hasClosedFrontmatter(model: NoteModel): boolean {
  return model.frontmatter.present && (!model.frontmatter.error || model.frontmatter.error.code === 'too_large');
}

/** Byte offset where the body starts for whole reads (after a closed block, else after a BOM). */
export function bodyStartByte(note: LoadedNote): number {
  if (hasClosedFrontmatter(note.model)) return note.model.frontmatter.bodyStart;
  return note.text.charCodeAt(0) === 0xfeff ? 3 : 0;
}

export function sliceBytes(bytes: Buffer, start: number, end = bytes.length): string {
  return bytes.subarray(start, end).toString('utf8');
}

/** `obsidian://open` deep link, when the operator named the vault as Obsidian knows it. */
export function deepLink(ctx: NotesCtx, path: string): string | undefined {
  return obsidianLink(ctx.vault, path);
}

/** Unique tags (display spelling, first seen wins), frontmatter first. */
export function tagList(model: NoteModel): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const t of model.tags) {
    if (seen.has(t.tag)) continue;
    seen.add(t.tag);
    out.push(t.display);
  }
  return out;
}
