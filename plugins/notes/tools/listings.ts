// list_notes and get_recent: paged note listings (keyset cursors) from the index, or the filesystem
// when the index is not available. Read-only.
import { defineTool, type ResultPaging } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';
import { listNotes, renderList, type ListQuery, type ListResult } from '../lib/listing.js';

/** Over the result budget a page holds fewer notes; next_cursor continues after the last one shown. */
const listPaging: ResultPaging<ListQuery, ListResult> = {
  limit: 'limit',
  size: (o) => o.notes.length,
  next: (input, o) => (o.next_cursor ? { ...input, cursor: o.next_cursor } : undefined),
};

export const listNotesTool = defineTool<NotesTools['list_notes']>({
  handler: (input, ctx: NotesCtx) => listNotes(ctx, input),
  render: (o) => renderList('Notes', o),
  paging: listPaging,
});

export const getRecentTool = defineTool<NotesTools['get_recent']>({
  handler: (input, ctx: NotesCtx) => listNotes(ctx, { ...input, limit: input.limit ?? 20, order_by: input.order_by ?? 'modified' }),
  render: (o) => renderList('Recently changed notes', o),
  paging: listPaging,
});
