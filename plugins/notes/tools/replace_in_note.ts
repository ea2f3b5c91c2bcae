// replace_in_note: Replace text inside one note, literally or with a JavaScript regular expression.
// replace_in_note, manage_tags and rename_tag: pattern and tag edits. Regexes run in the worker pool under
// a hard time budget; every note is written with its own precondition, so a concurrent edit is never lost.
import { defineTool } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';
import { notePath } from '../lib/note-io.js';
import { checkHashSyntax, readIncumbent } from '../lib/write-safety.js';
import type { RegexReplaceResult } from '../edits/regex-worker.js';
import { runRegexReplace } from '../lib/regex-runner.js';
import { finishWrite, renderWrite, type WriteOutput } from '../lib/write-output.js';

export default defineTool<NotesTools['replace_in_note']>({
  async handler(input, ctx: NotesCtx): Promise<WriteOutput> {
    checkHashSyntax(ctx, input.expected_hash);
    if (input.pattern === '') ctx.refuse('invalid_arguments', { problems: 'pattern must not be empty' });
    const flags = input.case_sensitive === false ? 'iu' : 'u';
    if (input.is_regex) {
      try {
        new RegExp(input.pattern, flags);
      } catch (e) {
        ctx.refuse('invalid_arguments', {
          problems: `pattern is not a valid regular expression: ${(e as Error).message.slice(0, 120)}`,
        });
      }
    }
    const path = notePath(ctx, input.path);
    const note = await readIncumbent(ctx, path, input.expected_hash);
    const max =
      Math.min(input.max_occurrences ?? 0, ctx.settings.notes.regex.maxOccurrences) ||
      ctx.settings.notes.regex.maxOccurrences;
    let result: RegexReplaceResult;
    if (input.is_regex) {
      result = await runRegexReplace(
        { text: note.text, pattern: input.pattern, flags, replacement: input.replacement, max },
        ctx.settings.notes.regex.timeoutMs,
        ctx.signal,
      );
    } else {
      const esc = input.pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      const re = new RegExp(esc, `g${flags}`);
      let count = 0;
      const text = note.text.replace(re, (m) => (count < max ? (count++, input.replacement) : m));
      result = { text, count };
    }
    if (result.count === 0)
      return {
        path,
        changed: false,
        dry_run: input.dry_run === true,
        content_hash: note.hash,
        replacements: 0,
        message: `No match in ${path}; nothing was written`,
      };
    return finishWrite(
      ctx,
      note,
      result.text,
      input.dry_run === true,
      `replaced ${result.count} occurrence(s) in note`,
      { replacements: result.count },
    );
  },
  render: renderWrite,
});
