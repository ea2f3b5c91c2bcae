// Built-in worker tasks: CPU-heavy pure functions run off the event loop. Each takes and returns
// structured-clone-able data. Never does I/O.
import { createHash } from 'node:crypto';
import {
  countTokens,
  countTokensBound,
  loadTokenizer,
  parseNote,
  unifiedPatch,
  packModel,
  viewOfModel,
  type ModelViewSpec,
} from '../../markdown/index.js';

export type WorkerTask = (payload: any) => unknown;

/**
 * A task's one-time set-up in a thread (a table to load), run before the task is said to start: the time
 * budget covers the task's own work, never a thread's first load of what every later task reuses.
 */
export const builtinSetup: Record<string, () => Promise<unknown>> = {
  'count-tokens': loadTokenizer,
  'count-tokens-bound': loadTokenizer,
};

export const builtinTasks: Record<string, WorkerTask> = {
  echo: (payload) => payload,
  sha256: (payload: { bytes: Uint8Array }) => 'sha256:' + createHash('sha256').update(payload.bytes).digest('hex'),
  'unified-diff': (payload: { path: string; before: string; after: string; context?: number }) =>
    unifiedPatch(payload.path, payload.before, payload.after, payload.context ?? 3),
  // cl100k token counts for read results (the encoder loads once per worker thread).
  'count-tokens': (payload: { texts: string[] }) => Promise.all(payload.texts.map((t) => countTokens(t))),
  // The result budget's count: whole-text cl100k counts, never sampled, at or just above the real encoder's.
  'count-tokens-bound': (payload: { texts: string[] }) => Promise.all(payload.texts.map((t) => countTokensBound(t))),
  // Batch parse (the index pipeline, and tools reading a note too large to parse on the event loop): one
  // NoteModel per note, in order (parseNote never throws). With `view`, only the fields the caller reads
  // come back (and every list's length): the main thread then never receives, nor collects, a model in
  // proportion to a huge note (tens of thousands of tasks, links and tags).
  // With `packLists`, the whole model comes back with its long lists as JSON slices (see packModel).
  'parse-notes': (
    payload: Array<{
      path: string;
      bytes: Uint8Array;
      maxFrontmatterBytes?: number;
      view?: ModelViewSpec;
      packLists?: number;
    }>,
  ) =>
    payload.map((n) => {
      const model = parseNote(n.bytes, { path: n.path, maxFrontmatterBytes: n.maxFrontmatterBytes });
      if (n.view) return viewOfModel(model, n.view);
      return n.packLists ? packModel(model, n.packLists) : model;
    }),
};
