// list_deleted_notes: notes deleted through the tools whose last version history still keeps. Read-only.
import { defineTool, clampLimit, cursorPaging } from '../../../src/sdk/index.js';
import type { HistoryTools } from '../../../src/generated/history/index.js';
import { cursorOf, parseCursor, settingsOf, toOut, settledStore } from '../lib.js';
import { deletedNotes } from '../store.js';

export default defineTool<HistoryTools['list_deleted_notes']>({
  async handler(input, ctx) {
    await settledStore(ctx);
    const limit = clampLimit(input.limit, settingsOf(ctx).listCap, 20);
    const rows = await deletedNotes(
      ctx.db,
      ctx.vault.id,
      limit + 1,
      parseCursor(ctx, 'list_deleted_notes', input.cursor),
    );
    const gone = [];
    for (const r of rows.slice(0, limit)) if (!(await ctx.vault.fs.exists(r.path))) gone.push(toOut(ctx, r));
    return { notes: gone, next_cursor: cursorOf(ctx, 'list_deleted_notes', rows, limit) };
  },
  render(o) {
    if (o.notes.length === 0) return 'No deleted notes are kept in the history.';
    return [
      'Deleted notes (restore with restore_revision(path, revision)):',
      ...o.notes.map(
        (n) =>
          `${n.path} — ${n.revision}, deleted ${n.at} by ${n.by_name ?? n.by}${n.tool ? ` (${n.tool})` : ''}${n.content_hash ? '' : ' [content not kept]'}`,
      ),
      ...(o.next_cursor ? [`More: cursor=${o.next_cursor}`] : []),
    ].join('\n');
  },
  paging: cursorPaging((o) => o.notes.length),
});
