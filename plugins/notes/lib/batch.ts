// The batch reads' shared loop (read_multiple_notes, get_notes_info): each path read on its own, so one bad
// path is that entry's error and never fails the others. Read-only.
import { isRefusal } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';
import { resolveNotePath } from '../../../src/sdk/index.js';
import type { NoteModelField } from '../../../src/markdown/index.js';
import { loadNote, type LoadedNote, type LoadNoteOptions } from './note-io.js';

export type ReadMultipleOutput = NotesTools['read_multiple_notes']['output'];

/** One note of a batch: what was read of it, or the error that stopped it. */
export type Entry<O extends { notes: unknown[] }> = O['notes'][number];

export type EntryError = Extract<Entry<ReadMultipleOutput>, { error: unknown }>['error'];

export async function each<T, F extends NoteModelField>(
  ctx: NotesCtx,
  paths: string[],
  load: LoadNoteOptions<F>,
  fn: (n: LoadedNote<F>) => Promise<T>,
): Promise<{ entries: Array<T | { path: string; error: EntryError }>; truncated: boolean; requested: number }> {
  const cap = ctx.settings.notes.read.maxBatch;
  const chosen = paths.slice(0, cap);
  const entries = await Promise.all(
    chosen.map(async (raw) => {
      try {
        return await fn(await loadNote(ctx, await resolveNotePath(ctx, raw), load));
      } catch (e) {
        if (!isRefusal(e)) throw e;
        return { path: raw, error: { code: e.code, message: e.message } };
      }
    }),
  );
  return { entries, truncated: paths.length > cap, requested: paths.length };
}
