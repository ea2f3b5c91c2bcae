// Tasks: checkbox list items with any status character, their heading path, tags and Tasks-plugin fields.
// Reads code-masked lines only; never interprets a checkbox inside code, math or comments.
import type { Task, TaskPriority, TaskStatusType } from './types.js';

const TASK_LINE = /^[ \t>]*(?:[-*+]|\d{1,9}[.)])[ \t]+\[([^\]\r\n])\](?:[ \t]+|$)/u;
const DATE_FIELDS: Record<string, 'due' | 'scheduled' | 'start' | 'done' | 'created' | 'cancelled'> = {
  '📅': 'due',
  '⏳': 'scheduled',
  '⌛': 'scheduled',
  '🛫': 'start',
  '✅': 'done',
  '➕': 'created',
  '❌': 'cancelled',
};
const PRIORITIES: Record<string, TaskPriority> = {
  '🔺': 'highest',
  '⏫': 'high',
  '🔼': 'medium',
  '🔽': 'low',
  '⏬': 'lowest',
};
const DATE_RE = /(📅|⏳|⌛|🛫|✅|➕|❌)\uFE0F?[ \t]*(\d{4}-\d{2}-\d{2})/gu;
const PRIORITY_RE = /(🔺|⏫|🔼|🔽|⏬)\uFE0F?/gu;
const ID_RE = /🆔\uFE0F?[ \t]*([A-Za-z0-9_-]+)/gu;
const DEPENDS_RE = /⛔\uFE0F?[ \t]*([A-Za-z0-9_-]+(?:[ \t]*,[ \t]*[A-Za-z0-9_-]+)*)/gu;
const ON_COMPLETION_RE = /🏁\uFE0F?[ \t]*[A-Za-z]+/gu;
const RECURRENCE_RE =
  /🔁\uFE0F?[ \t]*((?:(?!📅|⏳|⌛|🛫|✅|➕|❌|🔺|⏫|🔼|🔽|⏬|🆔|⛔|🏁|[ \t]\^[A-Za-z0-9-]+[ \t]*$)[^\r\n])*)/gu;
const BLOCK_ID_END = /[ \t]\^[A-Za-z0-9-]+[ \t]*$/u;

export function statusTypeOf(status: string): TaskStatusType {
  if (status === ' ') return 'todo';
  if (status === 'x' || status === 'X') return 'done';
  if (status === '-') return 'cancelled';
  if (status === '/') return 'in_progress';
  return 'other';
}

/** Task-line head: `maskedLine` decides (code stays invisible), `rawLine` supplies the description. */
export function matchTaskLine(maskedLine: string): { status: string; descriptionStart: number } | null {
  const m = TASK_LINE.exec(maskedLine);
  if (!m || m[1] === '\u0000') return null;
  return { status: m[1], descriptionStart: m[0].length };
}

export function parseTask(
  rawLine: string,
  head: { status: string; descriptionStart: number },
  line: number,
  headingPath: string,
  tags: string[],
): Task {
  let rest = rawLine.slice(head.descriptionStart);
  const task: Task = {
    line,
    status: head.status,
    statusType: statusTypeOf(head.status),
    text: '',
    raw: rawLine,
    headingPath,
    tags,
    due: null,
    scheduled: null,
    start: null,
    done: null,
    created: null,
    cancelled: null,
    recurrence: null,
    priority: null,
    id: null,
    dependsOn: [],
  };
  rest = rest.replace(RECURRENCE_RE, (_all, text: string) => {
    task.recurrence = text.trim() || null;
    return ' ';
  });
  rest = rest.replace(DATE_RE, (_all, emoji: string, date: string) => {
    task[DATE_FIELDS[emoji]] = date;
    return ' ';
  });
  rest = rest.replace(PRIORITY_RE, (_all, emoji: string) => {
    task.priority ??= PRIORITIES[emoji];
    return ' ';
  });
  rest = rest.replace(ID_RE, (_all, id: string) => {
    task.id ??= id;
    return ' ';
  });
  rest = rest.replace(DEPENDS_RE, (_all, ids: string) => {
    for (const id of ids.split(',')) if (id.trim() !== '') task.dependsOn.push(id.trim());
    return ' ';
  });
  rest = rest.replace(ON_COMPLETION_RE, ' ').replace(BLOCK_ID_END, '');
  task.text = rest.replace(/[ \t]+/g, ' ').trim();
  return task;
}
