// manage_tags: Add or remove a tag.
// replace_in_note, manage_tags and rename_tag: pattern and tag edits. Regexes run in the worker pool under
// a hard time budget; every note is written with its own precondition, so a concurrent edit is never lost.
import { defineTool } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';
import { notePath } from '../lib/note-io.js';
import { checkHashSyntax, readIncumbent } from '../lib/write-safety.js';
import { addTag, assertTag, removeTag } from '../edits/tags.js';
import { finishWrite, renderWrite, type WriteOutput } from '../lib/write-output.js';
import { notesRefusals } from '../refusals.js';

export default defineTool<NotesTools['manage_tags']>({
  async handler(input, ctx: NotesCtx): Promise<WriteOutput> {
    checkHashSyntax(ctx, input.expected_hash);
    const tag = assertTag(input.tag);
    const path = notePath(ctx, input.path);
    const note = await readIncumbent(ctx, path, input.expected_hash);
    const location = input.location ?? 'frontmatter';
    if (location === 'frontmatter' && note.model.frontmatter.error)
      notesRefusals.refuse('malformed_frontmatter', {
        path,
        reason: note.model.frontmatter.error.message.slice(0, 200),
      });
    const after = input.action === 'add' ? addTag(note, tag, location) : removeTag(note, tag, location);
    return finishWrite(
      ctx,
      note,
      after,
      input.dry_run === true,
      `${input.action === 'add' ? 'added' : 'removed'} #${tag} (${location}) in note`,
    );
  },
  render: renderWrite,
});
