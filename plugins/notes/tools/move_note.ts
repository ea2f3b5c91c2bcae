// move_note: a no-replace rename plus, optionally, rewriting every link that resolved to the moved note.
// The scan, plan and publish are the SDK's moveWithLinks (shared with move_file); this checks the paths.
import { defineTool, moveWithLinks, renderMoveResult, type MoveWithLinksResult } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';
import { notePath } from '../lib/note-io.js';
import { checkHashSyntax, readIncumbent } from '../lib/write-safety.js';

type MoveOutput = NotesTools['move_note']['output'];

/** A path naming a file with an extension other than `.md` (`x.png`, `Books.base`): not a note. */
const otherExtension = (p: string): boolean => /\.[A-Za-z0-9]{1,10}$/.test(p) && !/\.md$/i.test(p);

export default defineTool<NotesTools['move_note']>({
  async handler(input, ctx: NotesCtx): Promise<MoveOutput> {
    checkHashSyntax(ctx, input.expected_hash);
    for (const p of [input.from_path, input.to_path]) {
      // `x.mp4` is an attachment, not the note `x.mp4.md`, unless such a note exists.
      if (otherExtension(p) && !(await ctx.vault.fs.exists(ctx.vault.fs.checkPath(`${p}.md`))))
        ctx.refuse('not_a_note', { path: p, instead: 'move_file' });
    }
    const from = notePath(ctx, input.from_path);
    const to = notePath(ctx, input.to_path);
    if (from === to) ctx.refuse('invalid_arguments', { problems: 'from_path and to_path name the same note' });
    const note = await readIncumbent(ctx, from, input.expected_hash);
    const dry = input.dry_run === true;
    const s = ctx.settings.notes;
    const r: MoveWithLinksResult = await moveWithLinks(ctx, {
      from,
      to,
      rewriteLinks: input.rewrite_links === true,
      dryRun: dry,
      maxNoteBytes: s.write.maxNoteBytes,
      maxRewritesPerNote: s.move.maxRewritesPerNote,
      diffContext: s.diff.context,
      maxDiffChars: s.read.maxChars,
      moved: { text: note.text, model: note.model },
    });
    const out: MoveOutput = {
      from,
      to,
      moved: r.moved,
      dry_run: dry,
      content_hash: r.moved_hash ?? note.hash,
      rewritten_links: r.rewritten_links,
      rewritten_notes: r.rewritten_notes,
      ambiguous: r.left_alone.filter((l) => l.reason === 'ambiguous'),
      left_alone: r.left_alone,
      failures: r.failures,
      partial: r.partial,
      skipped: r.skipped,
      ...(r.diff !== undefined ? { diff: r.diff } : {}),
      message: '',
    };
    out.message = moveMessage('note', out, input.rewrite_links === true);
    return out;
  },
  render: (o) => renderMoveResult(o),
});

/** The one-line summary of a move result (shared wording with move_file). */
export function moveMessage(
  what: string,
  o: Pick<MoveOutput, 'from' | 'to' | 'dry_run' | 'rewritten_links' | 'rewritten_notes' | 'failures' | 'partial'>,
  rewrite: boolean,
): string {
  const links = rewrite ? ` and rewrite ${o.rewritten_links} link(s) across ${o.rewritten_notes.length} note(s)` : '';
  if (o.dry_run) return `Dry run: would move ${what} ${o.from} → ${o.to}${links}; nothing was written`;
  const names =
    o.failures
      .slice(0, 3)
      .map((f) => f.path)
      .join(', ') + (o.failures.length > 3 ? `, and ${o.failures.length - 3} more` : '');
  return `Moved ${o.from} → ${o.to}${rewrite ? ` — rewrote ${o.rewritten_links} link(s) across ${o.rewritten_notes.length} note(s)` : ''}${o.partial ? ` — partial success: links in ${names} were not rewritten (the note changed meanwhile); the move itself stands` : ''}`;
}
