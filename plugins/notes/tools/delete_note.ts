// delete_note: Delete a note.
// create_note, edit_note, set_frontmatter, delete_note: the note writes that climb the precondition
// ladder, answer dry runs with a diff, and report the new content_hash. Never clobber; never half-write.
import { defineTool } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';
import { notePath } from '../lib/note-io.js';
import { checkHashSyntax, readIncumbent, removeNote } from '../lib/write-safety.js';

export default defineTool<NotesTools['delete_note']>({
  async handler(input, ctx: NotesCtx) {
    checkHashSyntax(ctx, input.expected_hash);
    const path = notePath(ctx, input.path);
    const note = await readIncumbent(ctx, path, input.expected_hash);
    if (input.permanent) {
      await removeNote(ctx, note, true);
      return { path, permanent: true, previous_hash: note.hash, message: `Permanently deleted: ${path}` };
    }
    const r = await removeNote(ctx, note, false);
    const trashPath = r.trashPath ?? '';
    return {
      path,
      permanent: false,
      trash_path: trashPath,
      previous_hash: note.hash,
      message: `Soft-deleted: ${path} → ${trashPath}`,
    };
  },
  render: (o) => o.message,
});
