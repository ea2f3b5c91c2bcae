// create_note: Create a new note.
// create_note, edit_note, set_frontmatter, delete_note: the note writes that climb the precondition
// ladder, answer dry runs with a diff, and report the new content_hash. Never clobber; never half-write.
import { defineTool } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';
import { notePath } from '../lib/note-io.js';
import { checkHashSyntax, checkSize, createNote } from '../lib/write-safety.js';
import { type WriteOutput, renderWrite } from '../lib/write-output.js';

export default defineTool<NotesTools['create_note']>({
  async handler(input, ctx: NotesCtx): Promise<WriteOutput> {
    checkHashSyntax(ctx, input.expected_hash);
    const path = notePath(ctx, input.path);
    if (input.expected_hash !== undefined) ctx.refuse('no_incumbent', { path });
    const bytes = checkSize(ctx, path, input.content);
    const r = await createNote(ctx, path, bytes);
    return {
      path,
      changed: true,
      dry_run: false,
      content_hash: r.contentHash,
      message: `Created note: ${path} (${r.size} bytes)`,
    };
  },
  render: renderWrite,
});

// --- edit_note ----------------------------------------------------------------------------------------
