// update_task: set or toggle one checkbox task's status in place, adding/removing the ✅ (and ❌) date
// the way the Tasks plugin does, bound to the bytes read (or to expected_hash). Touches only that line.
import type { IndexService } from '../../../src/sdk/index-service.js';
import type { ToolContext, ToolModule } from '../../../src/sdk/types.js';
import { originOf } from '../../../src/sdk/define-family.js';

interface Input { path: string; line: number; status?: string; done?: boolean; expected_hash?: string }
interface Output { path: string; line: number; previous_status: string; status: string; text: string; content_hash: string; changed: boolean }

const TASK = /^(\s*(?:>\s*)*(?:[-*+]|\d+[.)]) \[)(.)(\])(.*)$/;
const DONE_DATE = / ?✅ ?\d{4}-\d{2}-\d{2}/u;
const CANCELLED_DATE = / ?❌ ?\d{4}-\d{2}-\d{2}/u;
const BLOCK_ID = /(\s\^[A-Za-z0-9-]+)\s*$/;

/** Add ` <marker> <date>` before a trailing block id, or at the end. */
function addField(rest: string, marker: string, date: string): string {
  const m = BLOCK_ID.exec(rest);
  const field = ` ${marker} ${date}`;
  return m ? `${rest.slice(0, m.index).trimEnd()}${field}${rest.slice(m.index)}` : `${rest.trimEnd()}${field}`;
}

export const updateTask: ToolModule<Input, Output> = {
  async handler(input, ctx: ToolContext<any>) {
    if (input.status !== undefined && input.done !== undefined) ctx.refuse('invalid_arguments', { problems: 'give status or done, not both' });
    const fs = ctx.vault.fs;
    const bytes = await fs.readBytes(input.path);
    const hash = fs.contentHash(bytes);
    if (input.expected_hash !== undefined && input.expected_hash !== hash) {
      ctx.refuse('stale_precondition', { path: input.path, expectedHash: input.expected_hash, currentHash: hash });
    }
    const text = bytes.toString('utf8');
    const lines = text.split('\n');
    const idx = input.line - 1;
    if (idx < 0 || idx >= lines.length) ctx.refuse('invalid_arguments', { problems: `line ${input.line} is past the end of "${input.path}" (${lines.length} lines)` });
    const cr = lines[idx].endsWith('\r') ? '\r' : '';
    const body = cr ? lines[idx].slice(0, -1) : lines[idx];
    const m = TASK.exec(body);
    if (!m) ctx.refuse('invalid_arguments', { problems: `line ${input.line} of "${input.path}" is not a checkbox task (list it with list_tasks)` });
    const [, head, old, close, rest0] = m;
    const wasDone = old === 'x' || old === 'X';
    const next = input.status ?? (input.done === undefined ? (wasDone ? ' ' : 'x') : input.done ? 'x' : ' ');
    const isDone = next === 'x' || next === 'X';
    const today = ctx.now().toISOString().slice(0, 10);
    let rest = rest0;
    if (isDone && !wasDone && !DONE_DATE.test(rest)) rest = addField(rest, '✅', today);
    if (!isDone && wasDone) rest = rest.replace(DONE_DATE, '');
    if (next === '-' && old !== '-' && !CANCELLED_DATE.test(rest)) rest = addField(rest, '❌', today);
    if (next !== '-' && old === '-') rest = rest.replace(CANCELLED_DATE, '');
    const updated = `${head}${next}${close}${rest}`;
    if (updated === body) return { path: input.path, line: input.line, previous_status: old, status: next, text: updated, content_hash: hash, changed: false };
    lines[idx] = updated + cr;
    const written = await fs.replace(input.path, Buffer.from(lines.join('\n'), 'utf8'), { expectedHash: hash });
    if (ctx.hasService('index')) await ctx.service<IndexService>('index').noteWritten(ctx.vault.id, input.path, originOf(ctx.principal));
    return { path: input.path, line: input.line, previous_status: old, status: next, text: updated, content_hash: written.contentHash, changed: true };
  },
  render(o) {
    const what = o.changed ? `Updated task [${o.previous_status}] → [${o.status}]` : `Task already [${o.status}]; nothing written`;
    return `${what} in ${o.path}:${o.line}: ${o.text.trim()} — content_hash: ${o.content_hash}`;
  },
};
