// edit_note: Change an existing note in exactly one of four modes.
// create_note, edit_note, set_frontmatter, delete_note: the note writes that climb the precondition
// ladder, answer dry runs with a diff, and report the new content_hash. Never clobber; never half-write.
import { defineTool } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';
import { notePath } from '../lib/note-io.js';
import { checkHashSyntax, readIncumbent } from '../lib/write-safety.js';
import { appendContent, findReplace, replaceBody, replaceSection } from '../edits/sections.js';
import { type WriteOutput, finishWrite, renderWrite } from '../lib/write-output.js';

type EditNoteInput = NotesTools['edit_note']['input'];

type Mode = 'replace' | 'append' | 'find' | 'section';

function pickMode(input: EditNoteInput, ctx: NotesCtx): Mode {
  let append = input.append === true;
  if (input.operation !== undefined) {
    if (input.operation === 'append') append = true;
    else if (input.operation !== 'replace')
      ctx.refuse('invalid_arguments', { problems: `operation must be "append" or "replace"` });
  }
  const chosen: Mode[] = [];
  if (append) chosen.push('append');
  if (input.find !== undefined) chosen.push('find');
  if (input.section !== undefined) chosen.push('section');
  if (input.operation === 'replace' && chosen.length > 0)
    ctx.refuse('invalid_arguments', { problems: `operation="replace" cannot be combined with ${chosen.join(', ')}` });
  if (chosen.length > 1)
    ctx.refuse('invalid_arguments', {
      problems: `choose at most one of append, find, section (got ${chosen.join(', ')})`,
    });
  if (input.replace_frontmatter && chosen.length > 0)
    ctx.refuse('invalid_arguments', {
      problems: `replace_frontmatter only applies to a full replace (got ${chosen.join(', ')})`,
    });
  return chosen[0] ?? 'replace';
}

export default defineTool<NotesTools['edit_note']>({
  async handler(input, ctx: NotesCtx): Promise<WriteOutput> {
    checkHashSyntax(ctx, input.expected_hash);
    const mode = pickMode(input, ctx);
    const path = notePath(ctx, input.path);
    const note = await readIncumbent(ctx, path, input.expected_hash);
    const dry = input.dry_run === true;
    switch (mode) {
      case 'append':
        return finishWrite(ctx, note, appendContent(note, input.content), dry, 'appended to note', { mode });
      case 'find': {
        const r = findReplace(note, input.find ?? '', input.content, input.replace_all === true);
        return finishWrite(ctx, note, r.text, dry, `replaced ${r.count} occurrence(s) in note`, {
          mode,
          replacements: r.count,
        });
      }
      case 'section': {
        const r = replaceSection(note, input.section ?? '', input.content);
        return finishWrite(ctx, note, r.text, dry, 'replaced section in note', {
          mode,
          heading: `#${r.heading.ordinal} ${r.heading.text}`,
        });
      }
      default:
        return finishWrite(
          ctx,
          note,
          replaceBody(note, input.content, input.replace_frontmatter === true),
          dry,
          'updated note',
          { mode: input.replace_frontmatter ? 'replace_frontmatter' : 'replace' },
        );
    }
  },
  render: renderWrite,
});

// --- set_frontmatter ----------------------------------------------------------------------------------
