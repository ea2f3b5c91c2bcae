// Loading notes for the tools: path normalisation, one strict UTF-8 read, its hash and its NoteModel.
// Reads only through ctx.vault.fs; never writes, and never guesses a path the caller did not name.
import {
  countsOf,
  parseNote,
  type LinkFilter,
  type ModelCounts,
  type ModelView,
  type ModelViewSpec,
  type NoteModel,
  type NoteModelField,
  type ParseNoteOptions,
} from '../../../src/markdown/index.js';
import { obsidianLink } from '../../../src/sdk/index.js';
import type { NotesCtx } from '../settings.js';

export interface LoadedNote<F extends NoteModelField = NoteModelField> {
  path: string;
  text: string;
  bytes: Buffer;
  hash: string;
  /** The parsed note: every field, or (loadNote's `fields`) the ones the caller named. */
  model: Pick<NoteModel, F | 'path'>;
  /** How many tasks, links, tags… the note holds, whichever fields were loaded. */
  counts: ModelCounts;
  size: number;
  mtimeMs: number;
}

export interface LoadNoteOptions<F extends NoteModelField> {
  /** Read cap in bytes (default notes.read.maxNoteBytes). */
  readonly maxBytes?: number;
  /**
   * The model fields the caller reads. A note parsed in the worker pool sends back only these (and the
   * counts), so a huge note's model never crosses to the event loop whole; [] skips its parse. Absent: all.
   */
  readonly fields?: readonly F[];
  /** With `tags` in fields: one tag per (identity, source) pair, enough for tag lists and has-tag checks. */
  readonly distinctTags?: boolean;
  /** With `links` in fields: only these links (a huge note's other links stay in the worker). */
  readonly linkFilter?: LinkFilter;
}

/** Notes are `.md` files: add the extension when the caller left it off (case-insensitively present is kept). */
export function notePath(ctx: NotesCtx, input: string): string {
  const p = /\.md$/i.test(input) ? input : `${input}.md`;
  return ctx.vault.fs.checkPath(p);
}

function parseOptions(ctx: NotesCtx, path: string): ParseNoteOptions {
  return { path, maxFrontmatterBytes: ctx.settings.notes.maxFrontmatterBytes };
}

/**
 * Parse in the worker pool (notes over notes.inlineParseMaxBytes: their parse must not hold the event loop),
 * on the bulk lane: a multi-megabyte parse takes seconds, and on the interactive lane (one thread) every
 * other caller's token count would wait behind it.
 */
async function parseInPool(ctx: NotesCtx, path: string, bytes: Uint8Array): Promise<NoteModel> {
  const [model] = await ctx.workers.run<NoteModel[]>('parse-notes', [{ ...parseOptions(ctx, path), bytes }], {
    signal: ctx.signal,
    lane: 'bulk',
  });
  return model;
}

/** Parse in the worker pool and send back only the fields named (and the lists' lengths). */
async function viewInPool<F extends NoteModelField>(
  ctx: NotesCtx,
  path: string,
  bytes: Uint8Array,
  view: ModelViewSpec<F>,
): Promise<ModelView<F>> {
  const [model] = await ctx.workers.run<Array<ModelView<F>>>(
    'parse-notes',
    [{ ...parseOptions(ctx, path), bytes, view }],
    { signal: ctx.signal, lane: 'bulk' },
  );
  return model;
}

/** A note's model: on this thread up to notes.inlineParseMaxBytes, in the worker pool beyond. */
export async function parseNoteBounded(ctx: NotesCtx, path: string, text: string): Promise<NoteModel> {
  const size = Buffer.byteLength(text, 'utf8');
  if (size <= ctx.settings.notes.inlineParseMaxBytes) return parseNote(text, parseOptions(ctx, path));
  return parseInPool(ctx, path, Buffer.from(text, 'utf8'));
}

/** A bug, not a refusal: the caller read the model of a large note it loaded with `fields: []`. */
function unparsed(path: string): never {
  throw new Error(`loadNote(${path}) was asked for no model fields, and its model was read`);
}

/**
 * Read one note (strict UTF-8, capped). A small note's model is parsed on first use, on this thread: an
 * append, a find/replace or a hash check never needs it. A note over notes.inlineParseMaxBytes is parsed
 * now, in the worker pool, so no note-sized parse runs on the event loop, and only the `fields` the caller
 * names come back from it. Refusals come from the vault core.
 */
export async function loadNote<F extends NoteModelField = NoteModelField>(
  ctx: NotesCtx,
  path: string,
  options: LoadNoteOptions<F> = {},
): Promise<LoadedNote<F>> {
  const maxBytes = options.maxBytes ?? ctx.settings.notes.read.maxNoteBytes;
  const { text, mtimeMs } = await ctx.vault.fs.readTextWithStat(path, { maxBytes });
  const bytes = Buffer.from(text, 'utf8');
  const large = bytes.length > ctx.settings.notes.inlineParseMaxBytes;
  let model: Pick<NoteModel, F | 'path'> | undefined;
  let counts: ModelCounts | undefined;
  if (large && !options.fields) model = await parseInPool(ctx, path, bytes);
  else if (large && options.fields && options.fields.length > 0) {
    const view = await viewInPool(ctx, path, bytes, {
      fields: options.fields,
      ...(options.distinctTags ? { distinctTags: true } : {}),
      ...(options.linkFilter ? { linkFilter: options.linkFilter } : {}),
    });
    model = view;
    counts = view.counts;
  }
  const full = (): NoteModel => {
    const m = parseNote(text, parseOptions(ctx, path));
    model = m;
    return m;
  };
  return {
    path,
    text,
    bytes,
    hash: ctx.vault.fs.contentHash(bytes),
    get model() {
      return model ?? (large ? unparsed(path) : full());
    },
    get counts() {
      counts ??= countsOf(model ? (model as NoteModel) : large ? unparsed(path) : full());
      return counts;
    },
    size: bytes.length,
    mtimeMs,
  };
}

/** A present, closed block, parsed or too large to parse (its extent is known either way). */
export function hasClosedFrontmatter(model: Pick<NoteModel, 'frontmatter'>): boolean {
  return model.frontmatter.present && (!model.frontmatter.error || model.frontmatter.error.code === 'too_large');
}

/** Byte offset where the body starts for whole reads (after a closed block, else after a BOM). */
export function bodyStartByte(note: { text: string; model: Pick<NoteModel, 'frontmatter'> }): number {
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
export function tagList(model: Pick<NoteModel, 'tags'>): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const t of model.tags) {
    if (seen.has(t.tag)) continue;
    seen.add(t.tag);
    out.push(t.display);
  }
  return out;
}
