// undo_changes: revert a selection of agents' changes, newest note first, through the one note-write
// path. A note someone else changed after (or between) the selected changes is reported as a conflict
// with both diffs and left as it is; dry_run (the default) only plans, and a long plan comes in pages.
import { defineTool, isRefusal, NOTE_WRITER, clampLimit, cursorPaging, offsetPager } from '../../../src/sdk/index.js';
import type { HistoryTools } from '../../../src/generated/history/index.js';
import { asText, boundedDiff, currentBytes, historyPath, revisionId, settingsOf, settledStore } from '../lib.js';
import { agentRevisions, blob, newestRevisionId, revisionsAfter, type RevisionRow, type UndoFilter } from '../store.js';
import type { HistoryCtx } from '../settings.js';

type Output = HistoryTools['undo_changes']['output'];
type PlanList = 'reverted' | 'conflicts' | 'skipped';

// A dry run's plan is paged by entry (each note's line in reverted, conflicts or skipped, in plan order).
const pages = offsetPager('undo_changes');

function parseTime(ctx: HistoryCtx, name: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const t = new Date(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  if (Number.isNaN(t.getTime()))
    ctx.refuse('invalid_arguments', { problems: `${name} "${value}" is not an ISO 8601 date or datetime` });
  return t;
}

const CUT_NOTE = '\n… (diff cut to the page; diff_revisions shows it whole)';

type DiffFields = { diff?: string; agent_diff?: string; other_diff?: string };

/**
 * Shorten a plan entry's diffs by `over` characters or more (the first entry of a page longer than the page
 * itself), each diff saying it was cut. Returns the characters the entry holds after.
 */
function cutDiffs(row: DiffFields, over: number): number {
  const keys = (['diff', 'agent_diff', 'other_diff'] as const).filter((k) => (row[k]?.length ?? 0) > 0);
  const share = Math.ceil((over + CUT_NOTE.length * keys.length) / Math.max(1, keys.length));
  for (const k of keys) {
    const text = row[k] as string;
    row[k] = `${text.slice(0, Math.max(0, text.length - share))}${CUT_NOTE}`;
  }
  return JSON.stringify(row).length;
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
    if (!dry && (input.cursor !== undefined || input.limit !== undefined))
      ctx.refuse('invalid_arguments', {
        problems: 'limit and cursor page a dry run; an undo applies the whole selection at once',
        argument: input.cursor !== undefined ? 'cursor' : 'limit',
      });
    const settings = settingsOf(ctx);
    // The whole plan is made on every page (a planned move changes the notes after it); a page is the entries
    // from the cursor's until `limit` characters of them are spent, and only its entries get diffs.
    const start = dry ? pages.start(ctx, input) : 0;
    const room = dry ? clampLimit(input.limit, settings.maxDiffChars) : Number.POSITIVE_INFINITY;
    const plan: Array<{ list: PlanList; row: unknown }> = [];
    let spent = 0;
    let end: number | undefined;
    const inPage = () => plan.length >= start && end === undefined;
    const add = <K extends PlanList>(list: K, row: Output[K][number]) => {
      const i = plan.length;
      plan.push({ list, row });
      if (!dry || i < start || end !== undefined) return;
      const cost = JSON.stringify(row).length;
      if (spent > 0 && spent + cost > room) end = i;
      else spent += spent === 0 && cost > room ? cutDiffs(row as DiffFields, cost - room) : cost;
    };
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
    const out: Output = { dry_run: dry, reverted: [], conflicts: [], skipped: [], message: '', next_cursor: null };
    for (const [path, group] of ordered) {
      const ids = group.map((r) => revisionId(r.id));
      if (group[0].target !== 'note') {
        add('skipped', { path, reason: 'a file, not a note: read its versions with read_revision' });
        continue;
      }
      const moves = group.filter((r) => r.kind === 'move');
      if (moves.length > 1 || (moves.length === 1 && group[0].kind !== 'move')) {
        add('skipped', {
          path,
          reason: 'moved more than once, or arrived here before the selection: move it back with move_note',
        });
        continue;
      }
      // A note the selection moved here goes back to where it was (its content first, when edited since).
      const movedFrom = moves.length === 1 ? moves[0].from_path : null;
      if (movedFrom && (await ctx.vault.fs.exists(movedFrom))) {
        add('conflicts', {
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
        const shown = inPage();
        const agent = shown ? await boundedDiff(ctx, path, before ?? '', agentAfter ?? '') : { diff: '' };
        const other = shown ? await boundedDiff(ctx, path, agentAfter ?? '', nowText) : { diff: '' };
        add('conflicts', { path, reason, revisions: ids, agent_diff: agent.diff, other_diff: other.diff });
        continue;
      }
      if (movedFrom && target === null && group.length > 1) {
        add('skipped', {
          path,
          reason: 'moved before any version of it was kept, then edited: its content before the selection is unknown',
        });
        continue;
      }
      if (before === undefined) {
        add('skipped', { path, reason: 'the version before the selected change is not kept (skipped or pruned)' });
        continue;
      }
      if (!movedFrom && target === null && now === null) {
        add('skipped', { path, reason: 'created and deleted by the selected changes; nothing to revert' });
        continue;
      }
      const action = movedFrom ? 'moved back' : target === null ? 'deleted' : now === null ? 'recreated' : 'restored';
      if (dry) {
        if (movedFrom) {
          planned.set(movedFrom, target ?? nowHash);
          planned.set(path, null);
        }
        const d = inPage()
          ? await boundedDiff(
              ctx,
              path,
              now ? (asText(now) ?? '') : '',
              target === null ? (movedFrom && now ? (asText(now) ?? '') : '') : before,
            )
          : { diff: '' };
        add('reverted', {
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
          add('reverted', { path, action, revisions: ids, content_hash: r.contentHash, to_path: r.path });
        } else if (action === 'recreated') {
          const r = await writer.create(ctx, path, writer.checkSize(ctx, path, before));
          add('reverted', { path, action, revisions: ids, content_hash: r.contentHash });
        } else {
          const note = await writer.read(ctx, path, nowHash ?? undefined);
          if (action === 'deleted') {
            await writer.remove(ctx, note);
            add('reverted', { path, action, revisions: ids, content_hash: null });
          } else {
            const r = await writer.replace(ctx, note, writer.checkSize(ctx, path, before));
            add('reverted', { path, action, revisions: ids, content_hash: r.contentHash });
          }
        }
      } catch (e) {
        if (!isRefusal(e)) throw e;
        add('conflicts', { path, reason: e.message, revisions: ids, agent_diff: '', other_diff: '' });
      }
    }
    const total = (list: PlanList) => plan.filter((e) => e.list === list).length;
    const page = plan.slice(start, end ?? plan.length);
    for (const e of page) (out[e.list] as unknown[]).push(e.row);
    const verb = dry ? 'would revert' : 'reverted';
    const part =
      page.length < plan.length ? ` (entries ${start + 1}–${start + page.length} of ${plan.length} here)` : '';
    out.message = `${dry ? 'Dry run: ' : ''}${verb} ${total('reverted')} note(s); ${total('conflicts')} conflict(s) left as they are; ${total('skipped')} skipped${part}${dry && total('reverted') ? '. Call again with dry_run: false to apply.' : ''}`;
    out.next_cursor = dry ? pages.next(ctx, input, start, page.length, plan.length) : null;
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
    if (o.next_cursor) lines.push(`more: cursor=${o.next_cursor}`);
    return lines.join('\n');
  },
  // Only a dry run shrinks (fewer characters of plan per page); an undo's report is never run twice.
  paging: cursorPaging((o) => (o.dry_run ? JSON.stringify([...o.reverted, ...o.conflicts, ...o.skipped]).length : 0)),
});
