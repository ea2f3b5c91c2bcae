// The global functions of the Bases expression language (`now()`, `date()`, `if()`, `link()`…). Each reads only
// the arguments it needs (`if` evaluates one branch). Pure: the clock and the vault come in with the context.
import { argValue, DAY, type EvalContext, EvalError, type Ev, type Locals, type Row } from './runtime.js';
import { asDate, BDate, BDuration, BFile, BLink, display, parseDurationParts, truthy, type Value } from './values.js';

export type GlobalFunction = (args: readonly Ev[], row: Row, ctx: EvalContext, locals: Locals | undefined) => Value;

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Global functions the engine evaluates (anything else is refused when the base is compiled). */
export const GLOBALS: ReadonlyMap<string, GlobalFunction> = new Map<string, GlobalFunction>([
  ['now', (_a, _r, ctx) => ctx.now],
  ['today', (_a, _r, ctx) => new BDate(ctx.nowMs - (((ctx.nowMs % DAY) + DAY) % DAY), false)],
  [
    'date',
    (a, row, ctx, locals) => {
      const v = argValue(a, 0, row, ctx, locals);
      const d = asDate(v);
      if (!d) throw new EvalError(`date() cannot read ${JSON.stringify(display(v))}`);
      return d;
    },
  ],
  [
    'duration',
    (a, row, ctx, locals) => {
      const v = argValue(a, 0, row, ctx, locals);
      if (v instanceof BDuration) return v;
      if (typeof v === 'number') return new BDuration(v);
      const p = typeof v === 'string' ? parseDurationParts(v) : null;
      if (!p) throw new EvalError(`duration() cannot read ${JSON.stringify(display(v))}`);
      return new BDuration(p.ms + p.months * 30 * DAY + p.years * 365 * DAY);
    },
  ],
  [
    'if',
    (a, row, ctx, locals) =>
      truthy(argValue(a, 0, row, ctx, locals)) ? argValue(a, 1, row, ctx, locals) : argValue(a, 2, row, ctx, locals),
  ],
  [
    'link',
    (a, row, ctx, locals) => {
      const v = argValue(a, 0, row, ctx, locals);
      const shown = a.length > 1 ? display(argValue(a, 1, row, ctx, locals)) : null;
      if (v instanceof BFile) return new BLink(v.rec.path, shown, v.rec.path);
      if (v instanceof BLink) return new BLink(v.target, shown ?? v.display, v.resolved);
      const target = display(v).replace(/^\[\[|\]\]$/g, '');
      return new BLink(target, shown, ctx.vault.resolve(target, row.rec.path));
    },
  ],
  [
    'list',
    (a, row, ctx, locals) => {
      const v = argValue(a, 0, row, ctx, locals);
      return Array.isArray(v) ? v : v === null ? [] : [v];
    },
  ],
  ['max', (a, row, ctx, locals) => extreme('max', a, row, ctx, locals)],
  ['min', (a, row, ctx, locals) => extreme('min', a, row, ctx, locals)],
  [
    'number',
    (a, row, ctx, locals) => {
      const v = argValue(a, 0, row, ctx, locals);
      if (typeof v === 'number') return v;
      if (typeof v === 'boolean') return v ? 1 : 0;
      if (v instanceof BDate) return v.ms;
      if (v instanceof BDuration) return v.ms;
      if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
      throw new EvalError(`number() cannot read ${JSON.stringify(display(v))}`);
    },
  ],
  [
    'file',
    (a, row, ctx, locals) => {
      const v = argValue(a, 0, row, ctx, locals);
      if (v instanceof BFile) return v;
      const path = v instanceof BLink ? v.resolved : typeof v === 'string' ? ctx.vault.resolve(v, row.rec.path) : null;
      const rec = path ? ctx.vault.file(path) : undefined;
      return rec ? new BFile(rec) : null;
    },
  ],
  // Display-only in Obsidian: an agent gets the text it would render from.
  ['image', displayOnly],
  ['icon', displayOnly],
  ['html', displayOnly],
  [
    'escapeHTML',
    (a, row, ctx, locals) => display(argValue(a, 0, row, ctx, locals)).replace(/[&<>"']/g, (c) => ESCAPES[c]),
  ],
]);

function displayOnly(a: readonly Ev[], row: Row, ctx: EvalContext, locals: Locals | undefined): Value {
  return argValue(a, 0, row, ctx, locals) === null ? null : display(argValue(a, 0, row, ctx, locals));
}

function extreme(
  which: 'max' | 'min',
  a: readonly Ev[],
  row: Row,
  ctx: EvalContext,
  locals: Locals | undefined,
): Value {
  // Every argument is evaluated (as Obsidian does); their number is bounded by the expression's size.
  const nums = a.map((ev) => ev(row, ctx, locals)).filter((x): x is number => typeof x === 'number');
  if (nums.length === 0) return null;
  return which === 'max' ? Math.max(...nums) : Math.min(...nums);
}
