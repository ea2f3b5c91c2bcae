// list_tasks: checkbox tasks from the index, filtered, ordered by due date (undated last), keyset-paged.
// Read-only; never reads notes, and its header always says how much of the vault is not indexed yet.
import { sql, type RawBuilder } from 'kysely';
import {
  indexLag,
  defineTool,
  INDEX,
  type ToolContext,
  clampLimit,
  cursorCodec,
  folderScope,
  jsonb,
  tagKeys,
  textArray,
  underFolder,
} from '../../../src/sdk/index.js';
import type { TasksTools } from '../../../src/generated/tasks/index.js';
import type { TasksSettings } from '../../../src/generated/tasks/settings.js';
import { customStatuses, STATUS_FILTERS, type StatusType } from '../statuses.js';

// The `tasks` settings section, generated from its schema in family.ts (npm run gen).
export type { TasksSettings };

type Ctx = ToolContext<{ tasks: TasksSettings }>;

type Output = TasksTools['list_tasks']['output'];

export type TaskRow = Output['tasks'][number];

/** The keyset position after a page: (due, path, line) of its last task. */
type TaskKey = [string | null, string, number];

const cursors = cursorCodec(
  'list_tasks',
  (v): v is TaskKey =>
    Array.isArray(v) &&
    v.length === 3 &&
    (v[0] === null || typeof v[0] === 'string') &&
    typeof v[1] === 'string' &&
    Number.isInteger(v[2]),
);

export default defineTool<TasksTools['list_tasks']>({
  async handler(input, ctx: Ctx) {
    const s = ctx.settings.tasks;
    const limit = clampLimit(input.limit, s.listCap, 100);
    const scope = folderScope(input.folder);
    const inFolder = (col: RawBuilder<unknown>) => underFolder(col, scope);
    const conds: RawBuilder<unknown>[] = [sql`t.vault_id = ${ctx.vault.id}`, inFolder(sql`t.path`)];
    const status = input.status ?? 'open';
    const custom = await customStatuses(ctx, s.statuses ?? {});
    if (status !== 'any') {
      const wanted: readonly string[] = STATUS_FILTERS[status];
      const all = [...custom.keys()];
      const chars = all.filter((c) => wanted.includes(custom.get(c)!));
      conds.push(
        sql`(t.status = ANY(${textArray(chars)}) OR (NOT (t.status = ANY(${textArray(all)})) AND t.status_type = ANY(${textArray(wanted)})))`,
      );
    }
    if (input.due_by) conds.push(sql`t.due IS NOT NULL AND t.due <= ${input.due_by}`);
    if (input.scheduled_by) conds.push(sql`t.scheduled IS NOT NULL AND t.scheduled <= ${input.scheduled_by}`);
    if (input.tags?.length) conds.push(sql`t.tags @> ${jsonb(tagKeys(input.tags))}`);
    if (input.priority?.length) {
      const named = input.priority.filter((p) => p !== 'none');
      conds.push(
        sql`(t.priority = ANY(${textArray(named)})${input.priority.includes('none') ? sql` OR t.priority IS NULL` : sql``})`,
      );
    }
    const where = sql.join(conds, sql` AND `);
    let after = sql`true`;
    const k = cursors.decode(ctx, input.cursor);
    if (k) {
      after = sql`((t.due IS NULL), coalesce(t.due, ''), t.path, t.line) > (${k[0] === null}, ${k[0] ?? ''}, ${k[1]}, ${k[2]})`;
    }
    const { rows } = await sql<Record<string, unknown>>`
      SELECT t.path, t.line, t.status, t.status_type, t.text, t.tags, t.heading_path, t.due, t.scheduled, t.start_date, t.done_date,
        t.created_date, t.cancelled_date, t.priority, t.recurrence, t.task_id, t.depends_on
      FROM tasks_items t WHERE ${where} AND ${after}
      ORDER BY (t.due IS NULL), coalesce(t.due, ''), t.path, t.line LIMIT ${limit + 1}`.execute(ctx.db);
    const tasks: TaskRow[] = rows.slice(0, limit).map((r) => ({
      path: r.path as string,
      line: r.line as number,
      status: r.status as string,
      status_type: custom.get(r.status as string) ?? (r.status_type as StatusType),
      text: r.text as string,
      tags: r.tags as string[],
      heading_path: r.heading_path as string,
      due: r.due as string | null,
      scheduled: r.scheduled as string | null,
      start: r.start_date as string | null,
      done: r.done_date as string | null,
      created: r.created_date as string | null,
      cancelled: r.cancelled_date as string | null,
      priority: r.priority as string | null,
      recurrence: r.recurrence as string | null,
      id: r.task_id as string | null,
      depends_on: r.depends_on as string[],
    }));
    const last = tasks[tasks.length - 1];
    const next_cursor = rows.length > limit && last ? cursors.encode(ctx, [last.due, last.path, last.line]) : null;
    const counts = (
      await sql<{ total: string; not_scanned: string; not_indexable: string }>`
      SELECT (SELECT count(*) FROM tasks_items t WHERE ${where}) AS total,
        (SELECT count(*) FROM notes n WHERE n.vault_id = ${ctx.vault.id} AND ${inFolder(sql`n.path`)}
           AND NOT EXISTS (SELECT 1 FROM tasks_notes s WHERE s.note_id = n.id)) AS not_scanned,
        (SELECT count(*) FROM tasks_notes s JOIN notes n ON n.id = s.note_id WHERE s.vault_id = ${ctx.vault.id} AND s.error IS NOT NULL
           AND ${inFolder(sql`n.path`)}) AS not_indexable`.execute(ctx.db)
    ).rows[0];
    let index_pending: number | null = null;
    if (ctx.hasService(INDEX)) {
      const st = ctx.service(INDEX).status(ctx.vault.id);
      index_pending = indexLag(st)?.pending ?? 0;
    }
    return {
      total: Number(counts.total),
      shown: tasks.length,
      not_scanned: Number(counts.not_scanned),
      not_indexable: Number(counts.not_indexable),
      index_pending,
      tasks,
      next_cursor,
    };
  },
  render(o) {
    const gaps = [
      `${o.not_scanned} notes not yet scanned for tasks`,
      `${o.not_indexable} notes whose tasks could not be indexed`,
    ];
    if (o.index_pending) gaps.push(`${o.index_pending} notes waiting to be indexed`);
    const out = [`${o.total} tasks match (showing ${o.shown}) — ${gaps.join(', ')}:`];
    for (const t of o.tasks) {
      const bits = [
        t.due && `📅 ${t.due}`,
        t.scheduled && `⏳ ${t.scheduled}`,
        t.start && `🛫 ${t.start}`,
        t.done && `✅ ${t.done}`,
        t.cancelled && `❌ ${t.cancelled}`,
        t.priority && `priority ${t.priority}`,
        t.recurrence && `🔁 ${t.recurrence}`,
      ]
        .filter(Boolean)
        .join(' ');
      out.push(
        `- [${t.status}] ${t.text}${bits ? ` — ${bits}` : ''}${tagsNotInText(t.text, t.tags)} — \`${t.path}\`:${t.line}${t.heading_path ? ` § ${t.heading_path}` : ''}${t.status_type === 'other' ? ' (status: other)' : ''}`,
      );
    }
    if (o.next_cursor) out.push(`more: cursor=${o.next_cursor}`);
    return out.join('\n');
  },
  // Over the result budget a page holds fewer tasks; next_cursor continues after the last one shown.
  paging: {
    limit: 'limit',
    size: (o) => o.tasks.length,
    next: (input, o) => (o.next_cursor ? { ...input, cursor: o.next_cursor } : undefined),
  },
});

/** The task's tags its text does not already show (inline `#tags` stay in the text, where they were written). */
function tagsNotInText(text: string, tags: readonly string[]): string {
  const shown = new Set((text.match(/#[^\s#]+/gu) ?? []).map((x) => x.slice(1).toLowerCase()));
  const rest = tags.filter((tag) => !shown.has(tag.toLowerCase()));
  return rest.length ? ` #${rest.join(' #')}` : '';
}
