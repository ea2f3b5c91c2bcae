// Built-in worker tasks: CPU-heavy pure functions run off the event loop. Each takes and returns
// structured-clone-able data. Never does I/O.
import { createHash } from 'node:crypto';
import { countTokens, countTokensBound, parseNote, unifiedPatch } from '../../markdown/index.js';

export type WorkerTask = (payload: any) => unknown;

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
  // NoteModel per note, in order (parseNote never throws).
  'parse-notes': (payload: Array<{ path: string; bytes: Uint8Array; maxFrontmatterBytes?: number }>) =>
    payload.map((n) => parseNote(n.bytes, { path: n.path, maxFrontmatterBytes: n.maxFrontmatterBytes })),
};
