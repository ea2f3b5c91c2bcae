// list_bases: every .base file and every note with a ```base block, with its views, in path order, keyset-paged.
// Read-only. The index keeps no record of fenced blocks, so notes are read (bounded by bases.listScanNotes, and the
// answer counts what it did not read); .base files are found by one walk of the vault's paths.
import {
  clampLimit,
  cursorCodec,
  defineTool,
  folderScope,
  inFolder,
  isRefusal,
  mapLimit,
} from '../../../src/sdk/index.js';
import type { BasesTools } from '../../../src/generated/bases/index.js';
import { baseBlocks, parseBase } from '../base-file.js';
import type { BasesCtx } from '../settings.js';

type Output = BasesTools['list_bases']['output'];
type Entry = Output['bases'][number];

/** The keyset position after a page: path and block (0 for a .base file) of its last base. */
type ListKey = [string, number];

const cursors = cursorCodec(
  'list_bases',
  (v): v is ListKey => Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && Number.isInteger(v[1]),
);

function describe(text: string, maxBytes: number): Pick<Entry, 'views' | 'problem'> {
  try {
    const base = parseBase(text, maxBytes);
    return { views: base.views.map((v) => ({ name: v.name, type: v.type })), problem: null };
  } catch (e) {
    if (isRefusal(e)) return { views: [], problem: e.message };
    throw e;
  }
}

export default defineTool<BasesTools['list_bases']>({
  async handler(input, ctx: BasesCtx) {
    const s = ctx.settings.bases;
    const limit = clampLimit(input.limit, s.listCap, 100);
    const scope = folderScope(input.folder);
    const after = cursors.decode(ctx, input.cursor);
    const baseFiles: string[] = [];
    const notes: string[] = [];
    for await (const e of ctx.vault.fs.walk()) {
      ctx.signal.throwIfAborted();
      if (e.kind !== 'file' || !inFolder(scope, e.path)) continue;
      if (/\.base$/i.test(e.path)) baseFiles.push(e.path);
      else if (/\.md$/i.test(e.path)) notes.push(e.path);
    }
    notes.sort();
    const scanned = notes.slice(0, s.listScanNotes);
    const entries: Entry[] = [];
    for (const path of baseFiles) {
      let text: string;
      try {
        text = await ctx.vault.fs.readText(path, { maxBytes: s.maxBaseBytes });
      } catch (e) {
        if (!isRefusal(e)) throw e;
        entries.push({ path, block: null, line: null, views: [], problem: e.message });
        continue;
      }
      entries.push({ path, block: null, line: null, ...describe(text, s.maxBaseBytes) });
    }
    const found = await mapLimit(
      scanned,
      8,
      async (path) => {
        let text: string;
        try {
          text = await ctx.vault.fs.readText(path, { maxBytes: 16 * s.maxBaseBytes });
        } catch (e) {
          if (isRefusal(e)) return [];
          throw e;
        }
        if (!/^ {0,3}(```|~~~)\s*base\s*$/im.test(text)) return [];
        return baseBlocks(text).map(
          (b, i): Entry => ({ path, block: i + 1, line: b.line, ...describe(b.text, s.maxBaseBytes) }),
        );
      },
      { signal: ctx.signal },
    );
    for (const list of found) if (list) entries.push(...list);
    const keyOf = (e: Entry): ListKey => [e.path, e.block ?? 0];
    const cmp = (a: ListKey, b: ListKey) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]);
    entries.sort((a, b) => cmp(keyOf(a), keyOf(b)));
    const rest = after ? entries.filter((e) => cmp(keyOf(e), after) > 0) : entries;
    const page = rest.slice(0, limit);
    const last = page[page.length - 1];
    return {
      total: entries.length,
      shown: page.length,
      notes_not_scanned: notes.length - scanned.length,
      next_cursor: rest.length > limit && last ? cursors.encode(ctx, keyOf(last)) : null,
      bases: page,
    };
  },
  render(o) {
    const out = [
      `${o.total} bases${o.shown < o.total ? ` (showing ${o.shown})` : ''}${o.notes_not_scanned ? ` — ${o.notes_not_scanned} notes not scanned for base blocks (bases.listScanNotes)` : ''}:`,
    ];
    for (const b of o.bases) {
      const where = b.block === null ? `\`${b.path}\`` : `\`${b.path}\` block ${b.block} (line ${b.line})`;
      const views = b.views.map((v) => `"${v.name}" (${v.type})`).join(', ') || '(no views)';
      out.push(`- ${where}: ${b.problem ? `⚠ ${b.problem}` : views}`);
    }
    if (o.next_cursor) out.push(`more: cursor=${o.next_cursor}`);
    return out.join('\n');
  },
  paging: {
    limit: 'limit',
    size: (o) => o.bases.length,
    next: (input, o) => (o.next_cursor ? { ...input, cursor: o.next_cursor } : undefined),
  },
});
