// query_base: one view of a base (a .base file, a note's ```base block, or inline YAML) answered from the index,
// paged by offset under a cursor bound to the base's text, view and `this`. Read-only; reads the base's own file only.
import { createHash } from 'node:crypto';
import { clampLimit, cursorCodec, defineTool } from '../../../src/sdk/index.js';
import type { BasesTools } from '../../../src/generated/bases/index.js';
import { type BaseDef, baseBlocks, parseBase } from '../base-file.js';
import { type CompiledView, compileView, type EngineLimits, runView } from '../engine.js';
import type { Cell } from '../expr/values.js';
import { loadVault } from '../records.js';
import { basesRefusals } from '../refusals.js';
import { type BasesCtx, engineLimits } from '../settings.js';

type Output = BasesTools['query_base']['output'];

/** Bases compiled lately (by text, view and limits): a base asked again is not parsed or compiled again. */
const COMPILED_KEPT = 64;
const compiledViews = new Map<string, { base: BaseDef; cv: CompiledView }>();

function compiled(
  text: string,
  view: string | undefined,
  maxBytes: number,
  limits: EngineLimits,
): { base: BaseDef; cv: CompiledView } {
  const key = createHash('sha256')
    .update(`${maxBytes}\0${JSON.stringify(limits)}\0${view ?? ''}\0${view === undefined ? 0 : 1}\0${text}`)
    .digest('base64url');
  const held = compiledViews.get(key);
  if (held) {
    compiledViews.delete(key);
    compiledViews.set(key, held); // most recently used last
    return held;
  }
  const base = parseBase(text, maxBytes);
  const out = { base, cv: compileView(base, view, limits) };
  // Only bases that compiled are kept (a refusal is thrown above); the oldest goes past the bound.
  compiledViews.set(key, out);
  if (compiledViews.size > COMPILED_KEPT) compiledViews.delete(compiledViews.keys().next().value!);
  return out;
}

/** The page position: a digest of what was asked (base text, view, this) and the offset of the next row. */
type PageKey = [string, number];

const cursors = cursorCodec(
  'query_base',
  (v): v is PageKey =>
    Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && Number.isInteger(v[1]) && v[1] >= 0,
);

function cleanPath(p: string): string {
  return p.replace(/\\/g, '/').replace(/^\/+/, '');
}

/** The base's YAML, where it came from, and the file `this` stands for by default. */
async function baseSource(
  input: BasesTools['query_base']['input'],
  ctx: BasesCtx,
): Promise<{ text: string; label: string | null; home: string | null }> {
  const max = ctx.settings.bases.maxBaseBytes;
  if ((input.path === undefined) === (input.yaml === undefined))
    ctx.refuse('invalid_arguments', {
      problems: 'give exactly one of path (a .base file or a note with a ```base block) and yaml (an ad-hoc base)',
    });
  if (input.yaml !== undefined) return { text: input.yaml, label: null, home: null };
  const path = cleanPath(input.path!);
  if (/\.base$/i.test(path)) {
    if (!(await ctx.vault.fs.exists(path))) ctx.refuse('not_found', { path });
    return { text: await ctx.vault.fs.readText(path, { maxBytes: max }), label: path, home: path };
  }
  const note = /\.md$/i.test(path) ? path : (await ctx.vault.fs.exists(`${path}.md`)) ? `${path}.md` : path;
  if (!(await ctx.vault.fs.exists(note))) ctx.refuse('not_found', { path });
  if (!/\.md$/i.test(note))
    basesRefusals.refuse('bases_no_base', { path: note, reason: 'it is neither a .base file nor a note' });
  const blocks = baseBlocks(await ctx.vault.fs.readText(note, { maxBytes: 16 * max }));
  const n = input.block ?? 1;
  if (blocks.length === 0)
    basesRefusals.refuse('bases_no_base', { path: note, reason: 'the note has no ```base block' });
  if (n > blocks.length)
    basesRefusals.refuse('bases_no_base', {
      path: note,
      reason: `the note has ${blocks.length} base blocks, not ${n}`,
    });
  return { text: blocks[n - 1].text, label: blocks.length > 1 || n > 1 ? `${note}#${n}` : note, home: note };
}

export default defineTool<BasesTools['query_base']>({
  async handler(input, ctx: BasesCtx) {
    const s = ctx.settings.bases;
    const limits = engineLimits(s);
    const pageSize = clampLimit(input.limit, s.rowsCap, 100);
    const src = await baseSource(input, ctx);
    const { base, cv } = compiled(src.text, input.view, s.maxBaseBytes, limits);
    const thisPath = input.this !== undefined ? cleanPath(input.this) : src.home;
    const digest = createHash('sha256')
      .update(`${src.label}\0${src.text}\0${cv.view.name}\0${thisPath}`)
      .digest('base64url')
      .slice(0, 16);
    const key = cursors.decode(ctx, input.cursor);
    if (key && key[0] !== digest)
      ctx.refuse('invalid_arguments', {
        problems: 'cursor belongs to another base, view or this; pass the next_cursor of the same query verbatim',
        argument: 'cursor',
      });
    const offset = key?.[1] ?? 0;
    const loaded = await loadVault(ctx, { links: cv.needsLinks, ctime: cv.needsCtime, notesOnly: cv.notesOnly });
    let thisRec =
      thisPath === null ? null : (loaded.byPath.get(thisPath) ?? loaded.byPath.get(`${thisPath}.md`) ?? null);
    if (input.this !== undefined && thisRec === null) ctx.refuse('not_found', { path: input.this });
    thisRec ??= null;
    const r = await runView(cv, {
      records: loaded.records,
      vault: loaded.lookup,
      nowMs: ctx.now().getTime(),
      thisRec,
      limits,
      offset,
      pageSize,
      signal: ctx.signal,
    });
    const next = offset + r.rows.length;
    const out: Output = {
      base: src.label,
      view: cv.view.name,
      views: base.views.map((v) => v.name),
      columns: cv.columns.map((c) => ({ ...c })),
      rows: r.rows.map((row) => ({
        path: row.path,
        ...(row.group ? { group: row.group as Output['rows'][number]['group'] & Cell } : {}),
        values: row.cells as Record<string, Cell>,
      })) as Output['rows'],
      groups: r.groups.map((g) => ({
        key: g.key,
        count: g.count,
        ...(g.summaries ? { summaries: g.summaries.map((x) => ({ ...x })) } : {}),
      })) as Output['groups'],
      summaries: r.summaries.map((x) => ({ ...x })) as Output['summaries'],
      total: r.total,
      shown: r.rows.length,
      next_cursor: next < r.total ? cursors.encode(ctx, [digest, next]) : null,
    };
    if (loaded.linksIncomplete) out.links_incomplete = true;
    return out;
  },
  render(o) {
    const head = `${o.base ?? 'inline base'} — view "${o.view}"${o.views.length > 1 ? ` (views: ${o.views.map((v) => `"${v}"`).join(', ')})` : ''}: ${o.total} rows${o.shown < o.total ? ` (showing ${o.shown})` : ''}`;
    const out = [head];
    if (o.links_incomplete) out.push('(link properties read from an incomplete link index: over bases.maxLinks)');
    out.push(
      `columns: ${o.columns.map((c) => (c.name === c.id ? c.id : `${c.name} (${c.id})`)).join(' | ') || '(none)'}`,
    );
    let group: string | undefined;
    for (const row of o.rows) {
      if (row.group) {
        const g = showCell(row.group);
        if (g !== group) {
          const found = o.groups.find((x) => showCell(x.key) === g);
          out.push(`## ${g || '(empty)'}${found ? ` (${found.count})` : ''}`);
          if (found?.summaries?.length)
            out.push(found.summaries.map((x) => `${x.summary} of ${x.column}: ${showCell(x.value)}`).join('; '));
          group = g;
        }
      }
      const cells = o.columns.map((c) => showCell(row.values[c.id] ?? { type: 'null', value: null }));
      out.push(`- \`${row.path}\`${cells.length ? ` | ${cells.join(' | ')}` : ''}`);
    }
    for (const x of o.summaries) out.push(`${x.summary} of ${x.column}: ${showCell(x.value)}`);
    if (o.next_cursor) out.push(`more: cursor=${o.next_cursor}`);
    return out.join('\n');
  },
  // Over the result budget a page holds fewer rows; next_cursor continues after the last one shown.
  paging: {
    limit: 'limit',
    size: (o) => o.rows.length,
    next: (input, o) => (o.next_cursor ? { ...input, cursor: o.next_cursor } : undefined),
  },
});

function showCell(c: { type: string; value: unknown }): string {
  switch (c.type) {
    case 'null':
      return '';
    case 'error':
      return `⚠ ${String(c.value)}`;
    case 'link': {
      const l = c.value as { target: string; display: string | null };
      return `[[${l.target}${l.display ? `|${l.display}` : ''}]]`;
    }
    case 'list':
      return (c.value as unknown[])
        .map((v) =>
          typeof v === 'object' && v !== null && 'target' in v
            ? `[[${(v as { target: string }).target}]]`
            : typeof v === 'string'
              ? v
              : JSON.stringify(v),
        )
        .join(', ');
    case 'string':
      return String(c.value).replace(/\s+/g, ' ');
    default:
      return typeof c.value === 'string' ? c.value : JSON.stringify(c.value);
  }
}
