// move_note: a no-replace rename plus, optionally, rewriting every link that resolved to the moved note.
// Everything is planned and checked before the rename; after it, failures are reported as partial success.
import { buildLinkIndex } from '../../../src/markdown/index.js';
import { isRefusal, Refusal, type ToolModule } from '../../../src/sdk/index.js';
import type { NotesCtx } from '../settings.js';
import { notePath, parseNoteBounded } from '../lib/note-io.js';
import { checkHashSyntax, indexMoved, indexWritten, readIncumbent, unifiedDiff } from '../lib/write-safety.js';
import { planLinkRewrites, type AmbiguousLink, type SourceNote } from '../edits/move-links.js';
import { mapLimit, readAllNotes } from '../lib/vault-scan.js';

interface MoveInput { from_path: string; to_path: string; rewrite_links?: boolean; dry_run?: boolean; expected_hash?: string }
interface MoveOutput {
  from: string; to: string; moved: boolean; dry_run: boolean; content_hash: string;
  rewritten_links: number; rewritten_notes: Array<{ path: string; links: number }>;
  ambiguous: AmbiguousLink[]; failures: Array<{ path: string; code: string; message: string }>; partial: boolean;
  diff?: string; message: string;
}

const stemLower = (p: string): string => p.slice(p.lastIndexOf('/') + 1).replace(/\.md$/i, '').toLowerCase();

export const moveNoteTool: ToolModule = {
  async handler(input: MoveInput, ctx: NotesCtx): Promise<MoveOutput> {
    checkHashSyntax(ctx, input.expected_hash);
    const from = notePath(ctx, input.from_path);
    const to = notePath(ctx, input.to_path);
    if (from === to) ctx.refuse('invalid_arguments', { problems: 'from_path and to_path name the same note' });
    const note = await readIncumbent(ctx, from, input.expected_hash);
    if (await ctx.vault.fs.exists(to)) ctx.refuse('already_exists', { path: to });
    const dry = input.dry_run === true;
    const base: MoveOutput = { from, to, moved: false, dry_run: dry, content_hash: note.hash, rewritten_links: 0, rewritten_notes: [], ambiguous: [], failures: [], partial: false, message: '' };

    let plans: ReturnType<typeof planLinkRewrites>['plans'] = [];
    const originals = new Map<string, string>();
    if (input.rewrite_links) {
      const all = await readAllNotes(ctx);
      const aliasMap = new Map<string, string[]>();
      for (const n of all.notes) if (n.aliases.length) aliasMap.set(n.path, n.aliases);
      const fromAliases = aliasMap.get(from) ?? [];
      const pre = buildLinkIndex(all.files, aliasMap);
      const postAliases = new Map(aliasMap);
      postAliases.delete(from);
      if (fromAliases.length) postAliases.set(to, fromAliases);
      const post = buildLinkIndex([...all.files.filter((f) => f !== from), to], postAliases);
      const needles = [stemLower(from), encodeURIComponent(stemLower(from)), ...fromAliases.map((a) => a.toLowerCase())];
      const sources: SourceNote[] = [];
      for (const n of all.notes) {
        if (n.path !== from && !needles.some((k) => n.lower.includes(k))) continue;
        sources.push({ path: n.path, text: n.text, model: n.path === from ? note.model : await parseNoteBounded(ctx, n.path, n.text) });
        originals.set(n.path, n.text);
      }
      const r = planLinkRewrites(from, to, sources, pre, post, ctx.settings.notes.move.maxRewritesPerNote);
      const cap = ctx.settings.notes.write.maxNoteBytes;
      for (const p of r.plans) if (Buffer.byteLength(p.text) > cap) throw new Refusal('move_aborted', { reason: `rewriting ${p.path} would push it over write.maxNoteBytes (${cap})` });
      plans = r.plans;
      base.ambiguous = r.ambiguous;
      base.rewritten_links = r.total;
      base.rewritten_notes = r.plans.map((p) => ({ path: p.path === from ? to : p.path, links: p.count }));
    }
    if (dry) {
      const diffs: string[] = [];
      for (const p of plans.slice(0, 20)) diffs.push(await unifiedDiff(ctx, p.path, originals.get(p.path) ?? '', p.text));
      const diff = diffs.join('\n').slice(0, ctx.settings.notes.read.maxChars);
      return { ...base, diff, message: `Dry run: would move ${from} → ${to}${input.rewrite_links ? ` and rewrite ${base.rewritten_links} link(s) across ${plans.length} note(s)` : ''}; nothing was written` };
    }
    await ctx.vault.fs.move(from, to);
    await indexMoved(ctx, from, to);
    base.moved = true;
    await mapLimit(plans, 8, async (p) => {
      const target = p.path === from ? to : p.path;
      try {
        const w = await ctx.vault.fs.replace(target, Buffer.from(p.text, 'utf8'), { expectedHash: ctx.vault.fs.contentHash(Buffer.from(originals.get(p.path) ?? '', 'utf8')) });
        if (target === to) base.content_hash = w.contentHash;
        await indexWritten(ctx, target);
      } catch (e) {
        if (!isRefusal(e)) throw e;
        base.failures.push({ path: target, code: e.code === 'stale_precondition' ? 'concurrent_write' : e.code, message: e.message });
      }
    });
    base.partial = base.failures.length > 0;
    if (base.partial) {
      const failed = new Set(base.failures.map((f) => f.path));
      base.rewritten_notes = base.rewritten_notes.filter((n) => !failed.has(n.path));
      base.rewritten_links = base.rewritten_notes.reduce((a, n) => a + n.links, 0);
    }
    const names = base.failures.slice(0, 3).map((f) => f.path).join(', ') + (base.failures.length > 3 ? `, and ${base.failures.length - 3} more` : '');
    base.message = `Moved ${from} → ${to}${input.rewrite_links ? ` — rewrote ${base.rewritten_links} link(s) across ${base.rewritten_notes.length} note(s)` : ''}${base.partial ? ` — partial success: links in ${names} were not rewritten (the note changed meanwhile); the move itself stands` : ''}`;
    return base;
  },
  render(o: MoveOutput) {
    const lines = [`${o.message} — content_hash: ${o.content_hash}`];
    for (const n of o.rewritten_notes.slice(0, 50)) lines.push(`- ${n.path}: ${n.links} link(s)`);
    for (const a of o.ambiguous.slice(0, 20)) lines.push(`- left alone (ambiguous): ${a.path} line ${a.line}: ${a.raw}`);
    for (const f of o.failures) lines.push(`- failed: ${f.path} (${f.code})`);
    if (o.diff) lines.push('', o.diff);
    return lines.join('\n');
  },
};
