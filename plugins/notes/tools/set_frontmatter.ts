// set_frontmatter: Set or remove top-level frontmatter keys.
// create_note, edit_note, set_frontmatter, delete_note: the note writes that climb the precondition
// ladder, answer dry runs with a diff, and report the new content_hash. Never clobber; never half-write.
import type { JsonValue } from '../../../src/markdown/index.js';
import { defineTool } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';
import { notePath } from '../lib/note-io.js';
import { checkHashSyntax, readIncumbent } from '../lib/write-safety.js';
import { editFrontmatter } from '../edits/frontmatter.js';
import { type WriteOutput, finishWrite, renderWrite } from '../lib/write-output.js';

export default defineTool<NotesTools['set_frontmatter']>({
  async handler(input, ctx: NotesCtx): Promise<WriteOutput> {
    checkHashSyntax(ctx, input.expected_hash);
    const path = notePath(ctx, input.path);
    const note = await readIncumbent(ctx, path, input.expected_hash);
    // The schema says any object; arguments arrive parsed from JSON, so every value is a JSON value.
    const r = editFrontmatter(note, (input.updates ?? {}) as Record<string, JsonValue>, input.remove ?? []);
    const parts = [
      r.set.length ? `set: ${r.set.join(', ')}` : '',
      r.removed.length ? `removed: ${r.removed.join(', ')}` : '',
      r.blockRemoved ? 'frontmatter block removed (last key)' : '',
    ].filter(Boolean);
    return finishWrite(ctx, note, r.text, input.dry_run === true, `updated frontmatter (${parts.join('; ')}) in note`, {
      set: r.set,
      removed: r.removed,
      block_removed: r.blockRemoved,
    });
  },
  render: renderWrite,
});

// --- delete_note --------------------------------------------------------------------------------------
