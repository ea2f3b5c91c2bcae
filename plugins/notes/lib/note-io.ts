// Loading notes for the tools: path normalisation, one strict UTF-8 read, its hash and its NoteModel.
// Reads only through ctx.vault.fs; never writes, and never guesses a path the caller did not name.
import { parseNote, type NoteModel } from '../../../src/markdown/index.js';
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

/**
 * Read one note (strict UTF-8, capped). Its model is parsed on first use: an append, a find/replace or a
 * hash check never needs it. Refusals come from the vault core unchanged.
 */
export async function loadNote(ctx: NotesCtx, path: string, maxBytes = ctx.settings.notes.read.maxNoteBytes): Promise<LoadedNote> {
  const { text, mtimeMs } = await ctx.vault.fs.readTextWithStat(path, { maxBytes });
  const bytes = Buffer.from(text, 'utf8');
  let model: NoteModel | undefined;
  return {
    path,
    text,
    bytes,
    hash: ctx.vault.fs.contentHash(bytes),
    get model() {
      model ??= parseNote(text, { path });
      return model;
    },
    size: bytes.length,
    mtimeMs,
  };
}

/** A frontmatter block that is present, closed and a YAML mapping. */
export function hasValidFrontmatter(model: NoteModel): boolean {
  return model.frontmatter.present && !model.frontmatter.error;
}

/** Byte offset where the body starts for whole reads and full replaces (after a valid block, else after a BOM). */
export function bodyStartByte(note: LoadedNote): number {
  if (hasValidFrontmatter(note.model)) return note.model.frontmatter.bodyStart;
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
