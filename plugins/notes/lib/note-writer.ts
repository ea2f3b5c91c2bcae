// The `note-writer` service: the notes family's write path (write-safety.ts) offered to every family,
// bound to the notes family's own settings, so update_task climbs the same ladder as edit_note.
// Holds no state of its own; every method works through the calling tool's ctx.
import {
  moveWithLinks,
  type NoteWriter,
  type ServiceFactoryContext,
  type ToolContext,
} from '../../../src/sdk/index.js';
import type { NotesCtx, NotesSettings } from '../settings.js';
import { notePath } from './note-io.js';
import {
  checkHashSyntax,
  checkSize,
  createNote,
  publish,
  readIncumbent,
  removeNote,
  unifiedDiff,
} from './write-safety.js';
import type { LoadedNote } from './note-io.js';

export function createNoteWriter(factory: ServiceFactoryContext): NoteWriter {
  const settings = factory.settings as { notes: NotesSettings };
  // The caller's principal, vault, signal and services; the notes family's settings.
  const as = (ctx: ToolContext<unknown>): NotesCtx => ({ ...ctx, settings });
  return {
    notePath: (ctx, path) => notePath(as(ctx), path),
    checkHash: (ctx, expected) => checkHashSyntax(as(ctx), expected),
    read: (ctx, path, expected) => readIncumbent(as(ctx), path, expected),
    checkSize: (ctx, path, text) => checkSize(as(ctx), path, text),
    async replace(ctx, incumbent, bytes) {
      const contentHash = await publish(as(ctx), incumbent, bytes);
      return { path: incumbent.path, contentHash, previousHash: incumbent.hash, size: bytes.length };
    },
    async create(ctx, path, bytes) {
      const r = await createNote(as(ctx), path, bytes);
      return { path, contentHash: r.contentHash, size: r.size };
    },
    remove: (ctx, incumbent, options) => removeNote(as(ctx), incumbent, options?.permanent === true),
    async move(ctx, incumbent, to) {
      const s = settings.notes;
      const target = notePath(as(ctx), to);
      const model = (incumbent as Partial<LoadedNote>).model;
      await moveWithLinks(ctx, {
        from: incumbent.path,
        to: target,
        rewriteLinks: false,
        dryRun: false,
        maxNoteBytes: s.write.maxNoteBytes,
        maxRewritesPerNote: s.move.maxRewritesPerNote,
        diffContext: s.diff.context,
        maxDiffChars: s.read.maxChars,
        ...(model ? { moved: { text: incumbent.text, model } } : {}),
      });
      return { path: target, contentHash: incumbent.hash, previousHash: incumbent.hash, size: incumbent.bytes.length };
    },
    diff: (ctx, path, before, after) => unifiedDiff(as(ctx), path, before, after),
  };
}
