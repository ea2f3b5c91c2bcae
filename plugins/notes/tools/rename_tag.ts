// rename_tag: Rename a tag vault-wide.
// replace_in_note, manage_tags and rename_tag: pattern and tag edits. Regexes run in the worker pool under
// a hard time budget; every note is written with its own precondition, so a concurrent edit is never lost.
import { defineTool, isRefusal } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';
import { parseNoteBounded } from '../lib/note-io.js';
import { publish, unifiedDiff } from '../lib/write-safety.js';
import { assertTag, renameTagInNote } from '../edits/tags.js';
import { mapLimit } from '../../../src/sdk/index.js';
import { readAllNotes } from '../lib/vault-scan.js';

type RenameOut = NotesTools['rename_tag']['output'];

export default defineTool<NotesTools['rename_tag']>({
  async handler(input, ctx: NotesCtx): Promise<RenameOut> {
    const from = assertTag(input.old_tag);
    const to = assertTag(input.new_tag);
    if (from === to) ctx.refuse('invalid_arguments', { problems: 'old_tag and new_tag are the same' });
    const all = await readAllNotes(ctx);
    const low = from.toLowerCase();
    const planned: Array<{ path: string; before: string; after: string; count: number }> = [];
    // Progress: planning over every note is the first half, writing the changed ones the second.
    let seen = 0;
    for (const n of all.notes) {
      ctx.client.progress((50 * ++seen) / all.notes.length, 100, 'finding the tag');
      if (ctx.signal.aborted) break;
      if (!n.lower.includes(low)) continue;
      const model = await parseNoteBounded(ctx, n.path, n.text);
      if (!model.tags.some((t) => t.tag === low || t.tag.startsWith(`${low}/`))) continue;
      if (model.frontmatter.error && model.tags.some((t) => t.source === 'frontmatter')) continue;
      const r = renameTagInNote({ path: n.path, text: n.text, model }, from, to);
      if (r.count > 0 && r.text !== n.text)
        planned.push({ path: n.path, before: n.text, after: r.text, count: r.count });
    }
    if (planned.length > ctx.settings.notes.rename.maxNotes)
      ctx.refuse('invalid_arguments', {
        problems: `the rename touches ${planned.length} notes, over rename.maxNotes (${ctx.settings.notes.rename.maxNotes})`,
      });
    const total = planned.reduce((a, p) => a + p.count, 0);
    if (input.dry_run) {
      const diffs: string[] = [];
      for (const p of planned.slice(0, 20)) diffs.push(await unifiedDiff(ctx, p.path, p.before, p.after));
      return {
        from,
        to,
        dry_run: true,
        total,
        failures: [],
        notes: planned.map((p) => ({
          path: p.path,
          occurrences: p.count,
          content_hash: ctx.vault.fs.contentHash(Buffer.from(p.before)),
        })),
        diff: diffs.join('\n').slice(0, ctx.settings.notes.read.maxChars),
        message: `Dry run: #${from} → #${to} would change ${total} occurrence(s) in ${planned.length} note(s)`,
      };
    }
    const done: RenameOut['notes'] = [];
    const failures: RenameOut['failures'] = [];
    await mapLimit(
      planned,
      8,
      async (p) => {
        try {
          const bytes = Buffer.from(p.after, 'utf8');
          const before = Buffer.from(p.before, 'utf8');
          const hash = await publish(
            ctx,
            { path: p.path, bytes: before, hash: ctx.vault.fs.contentHash(before) },
            bytes,
          );
          done.push({ path: p.path, occurrences: p.count, content_hash: hash });
        } catch (e) {
          if (!isRefusal(e)) throw e;
          failures.push({ path: p.path, code: e.code, message: e.message });
        }
      },
      { onDone: (k, of) => ctx.client.progress(50 + (50 * k) / of, 100, 'renaming') },
    );
    done.sort((a, b) => (a.path < b.path ? -1 : 1));
    const n = done.reduce((a, d) => a + d.occurrences, 0);
    return {
      from,
      to,
      dry_run: false,
      notes: done,
      failures,
      total: n,
      message: `Renamed #${from} → #${to}: ${n} occurrence(s) in ${done.length} note(s)${failures.length ? `; ${failures.length} note(s) changed meanwhile and were left alone` : ''}`,
    };
  },
  render(o) {
    const lines = [
      o.message,
      ...o.notes.map((n) => `- ${n.path}: ${n.occurrences}`),
      ...o.failures.map((f) => `- failed: ${f.path} (${f.code})`),
    ];
    if (o.diff) lines.push('', o.diff);
    return lines.join('\n');
  },
});
