// The precondition ladder every note write climbs (digest §4.3) and the one publish path with the write
// observers and index write-through: every family's note writes end here (the `note-writer` service).
// Order: malformed → no_incumbent → precondition_unavailable → required → stale → concurrent.
import { frontmatterBlockBytes } from '../../../src/markdown/index.js';
import {
  Refusal,
  isRefusal,
  observedWrite,
  originOf,
  writesObserved,
  INDEX,
  type IndexService,
} from '../../../src/sdk/index.js';
import type { NotesCtx } from '../settings.js';
import { loadNote, type LoadedNote } from './note-io.js';

const HASH = /^sha256:[0-9a-f]{64}$/;

/** Step 1, at tool entry before any path work: the caller's hash must be well formed. */
export function checkHashSyntax(ctx: NotesCtx, expected: string | undefined): void {
  if (expected === undefined) return;
  if (typeof expected !== 'string' || !HASH.test(expected))
    ctx.refuse('malformed_precondition', { expectedHash: '(not echoed)' });
}

/**
 * Steps 3–5: read the incumbent under the write cap, then compare. Runs before mode dispatch, size checks,
 * dry-run diffs and no-op answers, so a stale caller always hears "stale" first.
 */
export async function readIncumbent(ctx: NotesCtx, path: string, expected: string | undefined): Promise<LoadedNote> {
  const limit = ctx.settings.notes.write.maxNoteBytes;
  let note: LoadedNote;
  try {
    note = await loadNote(ctx, path, { maxBytes: limit });
  } catch (e) {
    if (isRefusal(e) && e.code === 'too_large' && expected !== undefined) {
      throw new Refusal('precondition_unavailable', { path, size: e.details.size, limit });
    }
    if (isRefusal(e) && e.code === 'not_found' && expected !== undefined) throw new Refusal('no_incumbent', { path });
    throw e;
  }
  if (expected === undefined && ctx.settings.notes.write.preconditionRequired) {
    ctx.refuse('precondition_required', { path, currentHash: note.hash });
  }
  if (expected !== undefined && expected !== note.hash) {
    ctx.refuse('stale_precondition', { path, expectedHash: expected, currentHash: note.hash });
  }
  return note;
}

/**
 * Refuse a result over the note size cap, or whose frontmatter block is over notes.maxFrontmatterBytes
 * (a block that large could not be parsed on read), checked before dry-run answers.
 */
export function checkSize(ctx: NotesCtx, path: string, text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  const limit = ctx.settings.notes.write.maxNoteBytes;
  if (bytes.length > limit) ctx.refuse('too_large', { path, size: bytes.length, limit });
  const block = frontmatterBlockBytes(text);
  const blockLimit = ctx.settings.notes.maxFrontmatterBytes;
  if (block > blockLimit) ctx.refuse('frontmatter_too_large', { path, size: block, limit: blockLimit });
  return bytes;
}

/** What publish needs of the note it replaces: the bytes and hash the write was checked against. */
export type Incumbent = Pick<LoadedNote, 'path' | 'bytes' | 'hash'>;

/** The observers' view of new bytes (hashed only when someone observes). */
function next(ctx: NotesCtx, bytes: Buffer): { bytes: Buffer; hash: string } | undefined {
  return writesObserved(ctx) ? { bytes, hash: ctx.vault.fs.contentHash(bytes) } : undefined;
}

/** Publish new bytes over the note we read; a change since our read is `concurrent_write`. */
export async function publish(ctx: NotesCtx, note: Incumbent, bytes: Buffer): Promise<string> {
  try {
    const intent = {
      kind: 'replace' as const,
      target: 'note' as const,
      path: note.path,
      incumbent: { bytes: note.bytes, hash: note.hash },
      next: next(ctx, bytes),
    };
    return await observedWrite(ctx, intent, async () => {
      const r = await ctx.vault.fs.replace(note.path, bytes, { expectedHash: note.hash });
      await indexWritten(ctx, note.path);
      return r.contentHash;
    });
  } catch (e) {
    if (isRefusal(e) && (e.code === 'stale_precondition' || e.code === 'no_incumbent')) {
      throw new Refusal('concurrent_write', {
        path: note.path,
        currentHash: (e.details.currentHash as string | undefined) ?? null,
      });
    }
    throw e;
  }
}

/** No-clobber create of a new note (`already_exists` when anything is there). */
export async function createNote(
  ctx: NotesCtx,
  path: string,
  bytes: Buffer,
): Promise<{ contentHash: string; size: number }> {
  return observedWrite(ctx, { kind: 'create', target: 'note', path, next: next(ctx, bytes) }, async () => {
    const r = await ctx.vault.fs.create(path, bytes);
    await indexWritten(ctx, path);
    return { contentHash: r.contentHash, size: r.size };
  });
}

/**
 * Soft delete (or unlink) of the note we read. The trash rename and the unlink are not hash-conditional in
 * the core: re-check right before them (the one extra read a delete pays, with or without observers).
 */
export async function removeNote(ctx: NotesCtx, note: Incumbent, permanent: boolean): Promise<{ trashPath?: string }> {
  const now = ctx.vault.fs.contentHash(
    await ctx.vault.fs.readBytes(note.path, { maxBytes: ctx.settings.notes.write.maxNoteBytes }),
  );
  if (now !== note.hash) ctx.refuse('concurrent_write', { path: note.path, currentHash: now });
  return observedWrite(
    ctx,
    { kind: 'remove', target: 'note', path: note.path, incumbent: { bytes: note.bytes, hash: note.hash }, permanent },
    async () => {
      if (permanent) {
        await ctx.vault.fs.unlink(note.path);
        await indexRemoved(ctx, note.path);
        return {};
      }
      const r = await ctx.vault.fs.trash(note.path);
      await indexRemoved(ctx, note.path);
      return { trashPath: r.trashPath };
    },
  );
}

function index(ctx: NotesCtx): IndexService | undefined {
  return ctx.hasService(INDEX) ? ctx.service(INDEX) : undefined;
}

async function guarded(ctx: NotesCtx, what: string, run: (s: IndexService) => Promise<void>): Promise<void> {
  const s = index(ctx);
  if (!s) return;
  try {
    await run(s);
  } catch (e) {
    // The bytes are published; a failed write-through only delays search, the background pass catches up.
    ctx.log.warn({ err: e instanceof Error ? e.message : String(e) }, `index write-through failed after ${what}`);
  }
}

export const indexWritten = (ctx: NotesCtx, path: string): Promise<void> =>
  guarded(ctx, 'write', (s) => s.noteWritten(ctx.principal.vaultId, path, originOf(ctx.principal)));
export const indexRemoved = (ctx: NotesCtx, path: string): Promise<void> =>
  guarded(ctx, 'delete', (s) => s.noteRemoved(ctx.principal.vaultId, path, originOf(ctx.principal)));

export function indexService(ctx: NotesCtx): IndexService | undefined {
  return index(ctx);
}

/** Unified diff for dry runs, computed in the worker pool. */
export async function unifiedDiff(ctx: NotesCtx, path: string, before: string, after: string): Promise<string> {
  return ctx.workers.run<string>(
    'unified-diff',
    { path, before, after, context: ctx.settings.notes.diff.context },
    { signal: ctx.signal },
  );
}
