// undo_changes: revert a selection of agents' changes, newest note first, through the one note-write
// path. A note someone else changed after (or between) the selected changes is reported as a conflict
// with both diffs and left as it is; dry_run (the default) only plans.
import { defineTool, isRefusal, NOTE_WRITER } from '../../../src/sdk/index.js';
import type { HistoryTools } from '../../../src/generated/history/index.js';
import { asText, boundedDiff, currentBytes, historyPath, revisionId, settingsOf, settledStore } from '../lib.js';
import { agentRevisions, blob, newestRevisionId, revisionsAfter, type RevisionRow, type UndoFilter } from '../store.js';
import type { HistoryCtx } from '../settings.js';

type Output = HistoryTools['undo_changes']['output'];

function parseTime(ctx: HistoryCtx, name: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const t = new Date(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(t.getTime()))
    ctx.refuse('invalid_arguments', { problems: `${name} "${value}" is not an ISO 8601 date or datetime` });
  return t;
}

/** Text of a version (null hash: the note did not exist, ''), or undefined when not kept / binary. */
async function textOf(ctx: HistoryCtx, hash: string | null): Promise<string | undefined> {
  if (hash === null) return '';
  const bytes = await blob(ctx.db, ctx.vault.id, hash);
  return bytes ? asText(bytes) : undefined;
}

export default defineTool<HistoryTools['undo_changes']>({
  async handler(input, ctx: HistoryCtx) {
    await settledStore(ctx);
    if (input.credential !== undefined && input.client !== undefined)
      ctx.refuse('invalid_arguments', { problems: 'give credential or client, not both' });
    const filter: UndoFilter = {
      since: parseTime(ctx, 'since', input.since),
      until: parseTime(ctx, 'until', input.until),
      credential: input.credential,
      client: input.client,
      paths: input.paths?.map((p) => historyPath(ctx, p)),
    };
    const dry = input.dry_run !== false;
    const settings = settingsOf(ctx);
    const writer = ctx.service(NOTE_WRITER);
    const rows = await agentRevisions(ctx.db, ctx.vault.id, filter, settings.undoCap * 50);
    // Revisions this undo makes (a note moved back) are not someone else's change to the notes after it.
    const ceiling = await newestRevisionId(ctx.db, ctx.vault.id);
    // What a dry run's planned moves would put back at a path (so the notes processed after see it there).
    const planned = new Map<string, string | null>();
    const groups = new Map<string, RevisionRow[]>();
    for (const r of rows) groups.set(r.path, [...(groups.get(r.path) ?? []), r]);
    // Newest change first: the note touched last is reverted first.
    const ordered = [...groups.entries()]
      .sort((a, b) => Number(b[1][b[1].length - 1].id) - Number(a[1][a[1].length - 1].id))
      .slice(0, settings.undoCap);
    const out: Output = { dry_run: dry, reverted: [], conflicts: [], skipped: [], message: '' };
    for (const [path, group] of ordered) {
      const ids = group.map((r) => revisionId(r.id));
      if (group[0].target !== 'note') {
        out.skipped.push({ path, reason: 'a file, not a note: read its versions with read_revision' });
        continue;
      }
      const moves = group.filter((r) => r.kind === 'move');
      if (moves.length > 1 || (moves.length === 1 && group[0].kind !== 'move')) {
        out.skipped.push({
          path,
          reason: 'moved more than once, or arrived here before the selection: move it back with move_note',
        });
        continue;
      }
      // A note the selection moved here goes back to where it was (its content first, when edited since).
      const movedFrom = moves.length === 1 ? moves[0].from_path : null;
      if (movedFrom && (await ctx.vault.fs.exists(movedFrom))) {
        out.conflicts.push({
          path,
          reason: `its old path ${movedFrom} is taken now; left as it is`,
          revisions: ids,
          agent_diff: '',
          other_diff: '',
        });
        continue;
      }
      const first = group[0];
      const last = group[group.length - 1];
      const selected = new Set(group.map((r) => r.id));
      const others = (await revisionsAfter(ctx.db, ctx.vault.id, path, Number(first.id))).filter(
        (r) => !selected.has(r.id) && Number(r.id) <= ceiling,
      );
      const plannedHash = dry ? planned.get(path) : undefined;
      const now =
        plannedHash !== undefined
          ? plannedHash === null
            ? null
            : ((await blob(ctx.db, ctx.vault.id, plannedHash)) ?? null)
          : await currentBytes(ctx, path, settings.maxVersionBytes);
      const nowHash = plannedHash !== undefined ? plannedHash : now ? ctx.vault.fs.contentHash(now) : null;
      const leftByAgent = last.kind === 'delete' ? null : last.hash;
      const target = first.kind === 'create' ? null : first.previous_hash;
      const before = await textOf(ctx, target);
      const agentAfter = await textOf(ctx, leftByAgent);
      if (others.length > 0 || nowHash !== leftByAgent) {
        const nowText = now ? (asText(now) ?? '') : '';
        const reason =
          others.length > 0
            ? `changed by ${[...new Set(others.map((o) => (o.actor_kind === 'human' ? 'human/sync' : (o.actor_name ?? o.actor_id ?? o.actor_kind))))].join(', ')} after the selected change; left as it is`
            : 'changed outside this server after the selected change (e.g. in Obsidian); left as it is';
        const agent = await boundedDiff(ctx, path, before ?? '', agentAfter ?? '');
        const other = await boundedDiff(ctx, path, agentAfter ?? '', nowText);
        out.conflicts.push({ path, reason, revisions: ids, agent_diff: agent.diff, other_diff: other.diff });
        continue;
      }
      if (movedFrom && target === null && group.length > 1) {
        out.skipped.push({
          path,
          reason: 'moved before any version of it was kept, then edited: its content before the selection is unknown',
        });
        continue;
      }
      if (before === undefined) {
        out.skipped.push({ path, reason: 'the version before the selected change is not kept (skipped or pruned)' });
        continue;
      }
      if (!movedFrom && target === null && now === null) {
        out.skipped.push({ path, reason: 'created and deleted by the selected changes; nothing to revert' });
        continue;
      }
      const action = movedFrom ? 'moved back' : target === null ? 'deleted' : now === null ? 'recreated' : 'restored';
      if (dry) {
        if (movedFrom) {
          planned.set(movedFrom, target ?? nowHash);
          planned.set(path, null);
        }
        const d = await boundedDiff(
          ctx,
          path,
          now ? (asText(now) ?? '') : '',
          target === null ? (movedFrom && now ? (asText(now) ?? '') : '') : before,
        );
        out.reverted.push({
          path,
          action,
          revisions: ids,
          content_hash: target,
          diff: d.diff,
          ...(movedFrom ? { to_path: movedFrom } : {}),
        });
        continue;
      }
      try {
        if (movedFrom) {
          let note = await writer.read(ctx, path, nowHash ?? undefined);
          if (target !== null && nowHash !== target) {
            await writer.replace(ctx, note, writer.checkSize(ctx, path, before));
            note = await writer.read(ctx, path, undefined);
          }
          const r = await writer.move(ctx, note, movedFrom);
          out.reverted.push({ path, action, revisions: ids, content_hash: r.contentHash, to_path: r.path });
        } else if (action === 'recreated') {
          const r = await writer.create(ctx, path, writer.checkSize(ctx, path, before));
          out.reverted.push({ path, action, revisions: ids, content_hash: r.contentHash });
        } else {
          const note = await writer.read(ctx, path, nowHash ?? undefined);
          if (action === 'deleted') {
            await writer.remove(ctx, note);
            out.reverted.push({ path, action, revisions: ids, content_hash: null });
          } else {
            const r = await writer.replace(ctx, note, writer.checkSize(ctx, path, before));
            out.reverted.push({ path, action, revisions: ids, content_hash: r.contentHash });
          }
        }
      } catch (e) {
        if (!isRefusal(e)) throw e;
        out.conflicts.push({ path, reason: e.message, revisions: ids, agent_diff: '', other_diff: '' });
      }
    }
    const verb = dry ? 'would revert' : 'reverted';
    out.message = `${dry ? 'Dry run: ' : ''}${verb} ${out.reverted.length} note(s); ${out.conflicts.length} conflict(s) left as they are; ${out.skipped.length} skipped${dry && out.reverted.length ? '. Call again with dry_run: false to apply.' : ''}`;
    return out;
  },
  render(o) {
    const lines = [o.message];
    for (const r of o.reverted)
      lines.push(
        `${o.dry_run ? 'would be ' : ''}${r.action}: ${r.path}${r.to_path ? ` → ${r.to_path}` : ''} (${r.revisions.join(', ')})${r.diff ? `\n${r.diff}` : ''}`,
      );
    for (const c of o.conflicts)
      lines.push(
        `CONFLICT ${c.path}: ${c.reason}\n-- what the selected change did:\n${c.agent_diff}\n-- what came after:\n${c.other_diff}`,
      );
    for (const s of o.skipped) lines.push(`skipped ${s.path}: ${s.reason}`);
    return lines.join('\n');
  },
});
