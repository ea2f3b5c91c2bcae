// One checkbox task line as text: split it, add or drop Tasks-plugin fields, and write the line of a
// recurring task's next occurrence. Pure string work; never touches files and never reads the clock.
import type { OccurrenceDates } from './recurrence.js';

/** head (indent, quote markers, bullet, `[`), status char, `]`, rest of the line. */
export const TASK_LINE = /^(\s*(?:>\s*)*(?:[-*+]|\d+[.)]) \[)(.)(\])(.*)$/;
const VS = '\\uFE0F?';
const DATE = '\\d{4}-\\d{2}-\\d{2}';
const field = (emoji: string) => new RegExp(`[ \\t]?(?:${emoji})${VS}[ \\t]*${DATE}`, 'u');
export const DONE_FIELD = field('✅');
export const CANCELLED_FIELD = field('❌');
const CREATED_FIELD = field('➕');
const DATE_FIELD = new RegExp(`(📅|⏳|⌛|🛫)(${VS})([ \\t]*)(${DATE})`, 'gu');
const ID_FIELD = new RegExp(`[ \\t]?🆔${VS}[ \\t]*[A-Za-z0-9_-]+`, 'u');
const DEPENDS_FIELD = new RegExp(`[ \\t]?⛔${VS}[ \\t]*[A-Za-z0-9_-]+(?:[ \\t]*,[ \\t]*[A-Za-z0-9_-]+)*`, 'u');
const BLOCK_ID = /(\s\^[A-Za-z0-9-]+)\s*$/;
const ON_COMPLETION_DELETE = new RegExp(`🏁${VS}[ \\t]*delete\\b`, 'iu');
// Same stop set as the note model's parser: the rule text ends at the next field or a trailing block id.
const RECURRENCE =
  /🔁\uFE0F?[ \t]*((?:(?!📅|⏳|⌛|🛫|✅|➕|❌|🔺|⏫|🔼|🔽|⏬|🆔|⛔|🏁|[ \t]\^[A-Za-z0-9-]+[ \t]*$)[^\r\n])*)/u;

export interface TaskLineDates extends OccurrenceDates {
  recurrence: string | null;
  deleteOnCompletion: boolean;
}

/** The fields of a task line's description that recurrence needs. */
export function readFields(rest: string): TaskLineDates {
  const out: TaskLineDates = {
    due: null,
    scheduled: null,
    start: null,
    recurrence: null,
    deleteOnCompletion: ON_COMPLETION_DELETE.test(rest),
  };
  const r = RECURRENCE.exec(rest);
  if (r) out.recurrence = r[1].trim() || null;
  for (const m of rest.matchAll(DATE_FIELD)) {
    const key = m[1] === '📅' ? 'due' : m[1] === '🛫' ? 'start' : 'scheduled';
    out[key] ??= m[4];
  }
  return out;
}

/** Add ` <marker> <date>` before a trailing block id, or at the end. */
export function addField(rest: string, marker: string, date: string): string {
  const m = BLOCK_ID.exec(rest);
  const f = ` ${marker} ${date}`;
  return m ? `${rest.slice(0, m.index).trimEnd()}${f}${rest.slice(m.index)}` : `${rest.trimEnd()}${f}`;
}

/**
 * The next occurrence of a recurring task, as the Tasks plugin writes it: status todo, dates moved, done,
 * cancelled, id, depends-on and block id dropped (they belong to the completed one), created date only
 * when `created` is given (the plugin's "set created date" option).
 */
export function nextOccurrenceLine(
  head: string,
  close: string,
  rest: string,
  next: OccurrenceDates,
  created: string | null,
): string {
  let r = rest
    .replace(BLOCK_ID, '')
    .replace(DONE_FIELD, '')
    .replace(CANCELLED_FIELD, '')
    .replace(CREATED_FIELD, '')
    .replace(ID_FIELD, '')
    .replace(DEPENDS_FIELD, '');
  r = r
    .replace(DATE_FIELD, (all, emoji: string, vs: string, gap: string) => {
      const value = emoji === '📅' ? next.due : emoji === '🛫' ? next.start : next.scheduled;
      return value === null ? '\u0000' : `${emoji}${vs}${gap}${value}`;
    })
    .replace(/[ \t]?\u0000/g, '');
  if (created !== null) r = addField(r, '➕', created);
  return `${head} ${close}${r.trimEnd()}`;
}
