// read_note_lines: Read note lines.
// get_note_outline and read_note_lines: navigate a note by headings or by line numbers.
// Read-only; line numbers are 1-based over the whole file (frontmatter included), as editors show them.
import { defineTool, resolveNotePath } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';
import { tokenCount } from '../lib/tokens.js';
import { loadNote } from '../lib/note-io.js';

export default defineTool<NotesTools['read_note_lines']>({
  async handler(input, ctx: NotesCtx) {
    const s = ctx.settings.notes.read;
    const note = await loadNote(ctx, await resolveNotePath(ctx, input.path), { fields: [] });
    const all = note.text.split(/\r\n|\r|\n/);
    const total = note.text.length === 0 ? 0 : all.length;
    if (input.start_line > Math.max(total, 1))
      ctx.refuse('invalid_arguments', { problems: `start_line ${input.start_line} is past the last line (${total})` });
    const count = Math.min(input.line_count ?? 200, s.maxLineCount);
    const picked: string[] = [];
    let used = 0;
    let truncated = false;
    for (let i = input.start_line - 1; i < Math.min(total, input.start_line - 1 + count); i++) {
      if (used + all[i].length + 1 > s.maxChars) {
        truncated = true;
        break;
      }
      picked.push(all[i]);
      used += all[i].length + 1;
    }
    const end = input.start_line - 1 + picked.length;
    if (end < total && picked.length === count) truncated = truncated || false;
    const content = picked.join('\n');
    return {
      path: note.path,
      content_hash: note.hash,
      start_line: input.start_line,
      end_line: end,
      total_lines: total,
      content,
      truncated: truncated || end < Math.min(total, input.start_line - 1 + count),
      token_estimate: await tokenCount(ctx, content),
    };
  },
  render(o) {
    const width = String(o.end_line).length;
    const body =
      o.content === '' && o.end_line < o.start_line
        ? '(no lines)'
        : o.content
            .split('\n')
            .map((l, i) => `${String(o.start_line + i).padStart(width)}| ${l}`)
            .join('\n');
    const more =
      o.end_line < o.total_lines
        ? `\n… continue with read_note_lines(path=${JSON.stringify(o.path)}, start_line=${o.end_line + 1})`
        : '';
    return `${o.path} lines ${o.start_line}–${o.end_line} of ${o.total_lines} (content_hash ${o.content_hash})\n${body}${more}`;
  },
  // Over the result budget fewer lines come back; start_line after the last one continues.
  paging: {
    limit: 'line_count',
    size: (o) => Math.max(0, o.end_line - o.start_line + 1),
    next: (input, o) => (o.end_line < o.total_lines ? { ...input, start_line: o.end_line + 1 } : undefined),
  },
});
