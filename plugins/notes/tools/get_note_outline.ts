// get_note_outline: Note outline.
// get_note_outline and read_note_lines: navigate a note by headings or by line numbers.
// Read-only; line numbers are 1-based over the whole file (frontmatter included), as editors show them.
import { defineTool, resolveNotePath } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';
import { loadNote } from '../lib/note-io.js';
import { budgetOutline } from '../lib/read-window.js';

export default defineTool<NotesTools['get_note_outline']>({
  async handler(input, ctx: NotesCtx) {
    const note = await loadNote(ctx, await resolveNotePath(ctx, input.path), { fields: ['outline'] });
    const o = budgetOutline(note.model.outline, ctx.settings.notes.read.maxChars);
    return {
      path: note.path,
      content_hash: note.hash,
      headings: o.entries,
      omitted: o.omitted,
      total: note.model.outline.length,
    };
  },
  render(o) {
    if (o.total === 0) return `${o.path} has no headings (content_hash ${o.content_hash}).`;
    const lines = [
      `${o.path} — ${o.total} headings (content_hash ${o.content_hash}); read one with read_note(path, section="#N"):`,
    ];
    for (const h of o.headings)
      lines.push(
        `${'  '.repeat(h.depth - 1)}${h.ordinal} ${'#'.repeat(h.depth)} ${h.text} (line ${h.line}, ${h.size} B)`,
      );
    if (o.omitted) lines.push(`… ${o.omitted} more headings not shown`);
    return lines.join('\n');
  },
});
