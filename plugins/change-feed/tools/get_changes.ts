// get_changes: the vault's change events after a cursor (ev:<n>, exact) or a UTC date (approximate), oldest first.
// Read-only; gap/reset meta events always pass the filters, and next_since never loses or repeats an event.
import { sql, type RawBuilder } from 'kysely';
import {
  defineTool,
  type ToolContext,
  agentActorSql,
  clampLimit,
  folderScope,
  textArray,
  underFolder,
} from '../../../src/sdk/index.js';
import type { ChangeFeedTools } from '../../../src/generated/change-feed/index.js';
import type { FeedSettings } from '../contributor.js';

type Ctx = ToolContext<{ changeFeed: FeedSettings }>;

type Input = ChangeFeedTools['get_changes']['input'];

export type Output = ChangeFeedTools['get_changes']['output'];

type EventRow = Output['events'][number];

const DATE = /^\d{4}-\d{2}-\d{2}$/;

const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

export async function readChanges(ctx: ToolContext<unknown>, input: Input, cap: number): Promise<Output> {
  const v = ctx.vault.id;
  const limit = clampLimit(input.limit, cap, 50);
  const meta = (
    await sql<{ last: string | null; pruned: string | null }>`
    SELECT (SELECT max(seq) FROM change_events WHERE vault_id = ${v}) AS last,
           (SELECT pruned_through FROM change_feed_meta WHERE vault_id = ${v}) AS pruned`.execute(ctx.db)
  ).rows[0];
  const pruned = Number(meta.pruned ?? 0);
  const last = Math.max(Number(meta.last ?? 0), pruned);
  let since: number;
  const m = /^ev:(\d{1,18})$/.exec(input.since.trim());
  if (m) {
    since = Number(m[1]);
    if (since > last)
      ctx.refuse('invalid_arguments', {
        problems: `since ev:${since} is above this vault's last event (ev:${last}); cursors belong to one vault`,
      });
  } else if (DATE.test(input.since) || DATETIME.test(input.since)) {
    const t = new Date(DATE.test(input.since) ? `${input.since}T00:00:00Z` : input.since);
    if (Number.isNaN(t.getTime()))
      ctx.refuse('invalid_arguments', { problems: `since "${input.since}" is not a valid date` });
    const first = (
      await sql<{
        s: string | null;
      }>`SELECT min(seq) AS s FROM change_events WHERE vault_id = ${v} AND at >= ${t}`.execute(ctx.db)
    ).rows[0].s;
    since = first === null ? last : Number(first) - 1;
  } else {
    ctx.refuse('invalid_arguments', {
      problems:
        'since must be ev:<n> (a next_since cursor) or a UTC date YYYY-MM-DD / ISO 8601 datetime with Z or ±HH:MM',
    });
  }
  const filters: RawBuilder<unknown>[] = [];
  const scope = folderScope(input.folder);
  if (scope.folder)
    filters.push(sql`(${underFolder(sql`path`, scope)} OR ${underFolder(sql`coalesce(from_path, '')`, scope)})`);
  if (input.kinds?.length) filters.push(sql`kind = ANY(${textArray(input.kinds)})`);
  const by = input.by ?? 'any';
  if (by === 'human') filters.push(sql`actor_kind = 'human'`);
  if (by === 'agents') filters.push(agentActorSql());
  if (by === 'me') filters.push(sql`actor_kind <> 'human' AND actor_id = ${ctx.principal.id}`);
  const pass = filters.length ? sql`(kind IN ('gap', 'reset') OR (${sql.join(filters, sql` AND `)}))` : sql`true`;
  // kind holds only what the contributor writes: the schema's event kinds.
  const { rows } = await sql<{
    seq: string;
    at: Date | string;
    kind: EventRow['kind'];
    path: string;
    from_path: string | null;
    reason: string | null;
    actor_kind: string;
    actor_id: string | null;
    actor_name: string | null;
    count: number | null;
  }>`
    SELECT seq, at, kind, path, from_path, reason, actor_kind, actor_id, actor_name, count FROM change_events
    WHERE vault_id = ${v} AND seq > ${since} AND seq <= ${last} AND ${pass}
    ORDER BY seq LIMIT ${limit + 1}`.execute(ctx.db);
  const more = rows.length > limit;
  const events = rows.slice(0, limit).map((r): EventRow => {
    const seq = Number(r.seq);
    const you = r.actor_kind !== 'human' && r.actor_id === ctx.principal.id;
    return {
      seq,
      cursor: `ev:${seq}`,
      at: new Date(r.at).toISOString(),
      kind: r.kind,
      path: r.path,
      from: r.from_path,
      reason: r.reason,
      by: r.actor_kind === 'human' ? 'human/sync' : `${r.actor_kind}`,
      by_name: r.actor_name,
      you,
      count: r.count,
    };
  });
  // A short page has seen everything up to `last` (filters included), so the cursor moves there.
  const next = more ? events[events.length - 1].seq : Math.max(since, last);
  return {
    since: input.since,
    next_since: `ev:${next}`,
    more,
    history_truncated: since < pruned,
    last_event: last,
    events,
  };
}

export default defineTool<ChangeFeedTools['get_changes']>({
  handler: (input, ctx: Ctx) => readChanges(ctx, input, ctx.settings.changeFeed.pageCap),
  render: renderChanges,
  // Over the result budget a page holds fewer events; next_since continues after the last one shown.
  paging: {
    limit: 'limit',
    size: (o) => o.events.length,
    next: (input, o) => (o.more ? { ...input, since: o.next_since } : undefined),
  },
});

export function renderChanges(o: Output): string {
  const head = `${o.events.length} changes after ${o.since} — next_since: ${o.next_since}${o.more ? ' — more: true' : ''}${o.history_truncated ? ' — history_truncated: true' : ''}`;
  const lines = o.events.map((e) => {
    if (e.kind === 'gap')
      return `- ${e.cursor} ${e.at} gap — ${e.count ?? '?'} events not itemised; resync with get_recent`;
    if (e.kind === 'reset')
      return `- ${e.cursor} ${e.at} reset — the index was rebuilt from empty; resync with get_recent`;
    const where =
      e.kind === 'moved' ? `${JSON.stringify(e.from)} -> ${JSON.stringify(e.path)}` : JSON.stringify(e.path);
    const who =
      e.by === 'human/sync' ? 'by human/sync' : `by ${e.by} ${JSON.stringify(e.by_name ?? '')}${e.you ? ' (you)' : ''}`;
    return `- ${e.cursor} ${e.at} ${e.kind} ${where}${e.reason ? ` reason=${e.reason}` : ''} ${who}`;
  });
  return [head, ...lines, `next_since: ${o.next_since}`].join('\n');
}
