// update_task: set or toggle one checkbox task's status in place, adding/removing the ✅ (and ❌) date and
// writing a recurring task's next occurrence the way the Tasks plugin does, bound to the bytes read.
// Touches only that line (plus the inserted occurrence); writes only through the note-writer service.
import { defineTool, NOTE_WRITER, type ToolContext } from '../../../src/sdk/index.js';
import type { TasksTools } from '../../../src/generated/tasks/index.js';
import { recurrenceOptions } from '../plugin-options.js';
import { nextOccurrence, parseRecurrence } from '../recurrence.js';
import { addField, CANCELLED_FIELD, DONE_FIELD, nextOccurrenceLine, readFields, TASK_LINE } from '../task-line.js';

type Output = TasksTools['update_task']['output'];

type NextOccurrence = NonNullable<Output['next_occurrence']>;

export default defineTool<TasksTools['update_task']>({
  async handler(input, ctx: ToolContext<unknown>) {
    if (input.status !== undefined && input.done !== undefined)
      ctx.refuse('invalid_arguments', { problems: 'give status or done, not both' });
    const writer = ctx.service(NOTE_WRITER);
    writer.checkHash(ctx, input.expected_hash);
    const path = writer.notePath(ctx, input.path);
    const note = await writer.read(ctx, path, input.expected_hash);
    const hash = note.hash;
    const lines = note.text.split('\n');
    const idx = input.line - 1;
    if (idx < 0 || idx >= lines.length)
      ctx.refuse('invalid_arguments', {
        problems: `line ${input.line} is past the end of "${path}" (${lines.length} lines)`,
      });
    const cr = lines[idx].endsWith('\r') ? '\r' : '';
    const body = cr ? lines[idx].slice(0, -1) : lines[idx];
    const m = TASK_LINE.exec(body);
    if (!m)
      ctx.refuse('invalid_arguments', {
        problems: `line ${input.line} of "${path}" is not a checkbox task (list it with list_tasks)`,
      });
    const [, head, old, close, rest0] = m;
    const wasDone = old === 'x' || old === 'X';
    const next = input.status ?? (input.done === undefined ? (wasDone ? ' ' : 'x') : input.done ? 'x' : ' ');
    const isDone = next === 'x' || next === 'X';
    const today = ctx.now().toISOString().slice(0, 10);
    let rest = rest0;
    if (isDone && !wasDone && !DONE_FIELD.test(rest)) rest = addField(rest, '✅', today);
    if (!isDone && wasDone) rest = rest.replace(DONE_FIELD, '');
    if (next === '-' && old !== '-' && !CANCELLED_FIELD.test(rest)) rest = addField(rest, '❌', today);
    if (next !== '-' && old === '-') rest = rest.replace(CANCELLED_FIELD, '');
    const updated = `${head}${next}${close}${rest}`;
    const fields = readFields(rest0);
    const base = { path, previous_status: old, status: next, text: updated, recurrence: fields.recurrence };
    if (updated === body) {
      return {
        ...base,
        line: input.line,
        content_hash: hash,
        changed: false,
        next_occurrence: null,
        completed_removed: false,
        recurrence_problem: null,
      };
    }

    // Completing a recurring task writes its next occurrence next to it (the Tasks plugin's behaviour).
    let occurrence: NextOccurrence | null = null;
    let problem: string | null = null;
    let removed = false;
    let taskLine = input.line;
    const out = [...lines];
    out[idx] = updated + cr;
    if (isDone && !wasDone && fields.recurrence !== null) {
      const rule = parseRecurrence(fields.recurrence);
      const opts = await recurrenceOptions(ctx);
      const dates = rule ? nextOccurrence(rule, fields, today, opts.removeScheduled) : null;
      if (!rule)
        problem = `🔁 "${fields.recurrence}" is not a rule this server understands; no next occurrence was written`;
      else if (!dates) problem = `🔁 "${fields.recurrence}" has no next date; no next occurrence was written`;
      else {
        const text = nextOccurrenceLine(head, close, rest0, dates, opts.setCreatedDate ? today : null);
        removed = fields.deleteOnCompletion;
        const completed = removed ? [] : [updated + cr];
        const block = opts.nextOnLineBelow ? [...completed, text + cr] : [text + cr, ...completed];
        out.splice(idx, 1, ...block);
        const occLine = opts.nextOnLineBelow && !removed ? input.line + 1 : input.line;
        if (!opts.nextOnLineBelow && !removed) taskLine = input.line + 1;
        occurrence = { line: occLine, text, ...dates };
      }
    }
    const written = await writer.replace(ctx, note, writer.checkSize(ctx, path, out.join('\n')));
    return {
      ...base,
      line: taskLine,
      content_hash: written.contentHash,
      changed: true,
      next_occurrence: occurrence,
      completed_removed: removed,
      recurrence_problem: problem,
    };
  },
  render(o) {
    const what = o.changed
      ? `Updated task [${o.previous_status}] → [${o.status}]`
      : `Task already [${o.status}]; nothing written`;
    const lines = [`${what} in ${o.path}:${o.line}: ${o.text.trim()} — content_hash: ${o.content_hash}`];
    if (o.completed_removed)
      lines[0] = `Completed and removed the task (🏁 delete) at ${o.path}:${o.line} — content_hash: ${o.content_hash}`;
    if (o.next_occurrence)
      lines.push(`Next occurrence written at line ${o.next_occurrence.line}: ${o.next_occurrence.text.trim()}`);
    if (o.recurrence_problem) lines.push(o.recurrence_problem);
    return lines.join('\n');
  },
});
