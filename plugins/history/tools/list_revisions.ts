// list_revisions: the kept versions of one note or file, newest first, with who made each. Read-only.
import { defineTool, clampLimit, cursorPaging } from '../../../src/sdk/index.js';
import type { HistoryTools } from '../../../src/generated/history/index.js';
import { currentBytes, cursorOf, historyReadPath, parseCursor, settingsOf, toOut, settledStore } from '../lib.js';
import { listRevisions as rows } from '../store.js';

export default defineTool<HistoryTools['list_revisions']>({
  async handler(input, ctx) {
    await settledStore(ctx);
    const path = await historyReadPath(ctx, input.path);
    const limit = clampLimit(input.limit, settingsOf(ctx).listCap, 20);
    const found = await rows(ctx.db, ctx.vault.id, path, limit + 1, parseCursor(ctx, 'list_revisions', input.cursor));
    const now = await currentBytes(ctx, path, settingsOf(ctx).maxVersionBytes).catch(() => null);
    return {
      path,
      current_hash: now ? ctx.vault.fs.contentHash(now) : null,
      revisions: found.slice(0, limit).map((r) => toOut(ctx, r)),
      next_cursor: cursorOf(ctx, 'list_revisions', found, limit),
    };
  },
  render(o) {
    if (o.revisions.length === 0)
      return `No revisions of ${o.path} are kept (current_hash: ${o.current_hash ?? 'none — no such file'}).`;
    const lines = o.revisions.map((r) => {
      const who =
        r.by === 'human/sync'
          ? 'human/sync'
          : `${r.by_name ?? r.credential}${r.you ? ' (you)' : ''}${r.client ? ` via ${r.client}${r.client_id ? ` (client ${r.client_id})` : ''}` : ''}${r.tool ? ` · ${r.tool}` : ''}`;
      const where = r.kind === 'move' ? ` from ${r.from_path}` : '';
      return `${r.revision} ${r.at} ${r.kind}${where} by ${who} — ${r.content_hash ?? '(no content)'} ${r.size ?? '?'} bytes${r.skipped ? ` [not kept: ${r.skipped}]` : ''}`;
    });
    return [
      `Revisions of ${o.path}, newest first (current_hash: ${o.current_hash ?? 'none'}):`,
      ...lines,
      ...(o.next_cursor ? [`More: cursor=${o.next_cursor}`] : []),
    ].join('\n');
  },
  paging: cursorPaging((o) => o.revisions.length),
});
