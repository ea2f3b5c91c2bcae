// What every single-note write answers and how it is shown (create_note, edit_note, set_frontmatter,
// replace_in_note, manage_tags): finishWrite publishes through the write path or answers a dry run's diff.
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';
import { checkSize, publish, unifiedDiff } from './write-safety.js';
import { keepLineEndings } from '../edits/line-endings.js';

/** What every single-note write answers (create_note, edit_note, set_frontmatter, replace_in_note, manage_tags share one schema shape). */
export type WriteOutput = NotesTools['edit_note']['output'];

export function renderWrite(o: WriteOutput): string {
  const head = `${o.message} — content_hash: ${o.content_hash}`;
  return o.diff !== undefined ? `${head}\n\n${o.diff === '' ? '(no changes)' : o.diff}` : head;
}

// --- create_note ------------------------------------------------------------------------------------

export async function finishWrite(
  ctx: NotesCtx,
  note: { path: string; text: string; hash: string } & Parameters<typeof publish>[1],
  edited: string,
  dryRun: boolean,
  what: string,
  extra: Partial<WriteOutput> = {},
): Promise<WriteOutput> {
  // Every edit keeps the note's line-ending style (a CRLF note gets no LF lines from the edit).
  const after = keepLineEndings(note.text, edited);
  const bytes = checkSize(ctx, note.path, after);
  if (after === note.text)
    return {
      path: note.path,
      changed: false,
      dry_run: dryRun,
      content_hash: note.hash,
      ...extra,
      message: `No changes for ${note.path}`,
      ...(dryRun ? { diff: '' } : {}),
    };
  if (dryRun) {
    const diff = await unifiedDiff(ctx, note.path, note.text, after);
    return {
      path: note.path,
      changed: true,
      dry_run: true,
      content_hash: note.hash,
      ...extra,
      diff,
      message: `Dry run: ${what} would change ${note.path}; nothing was written`,
    };
  }
  const hash = await publish(ctx, note, bytes);
  return {
    path: note.path,
    changed: true,
    dry_run: false,
    content_hash: hash,
    previous_hash: note.hash,
    ...extra,
    message: `${what[0].toUpperCase()}${what.slice(1)}: ${note.path}`,
  };
}
