// list_notes and get_recent: paged note listings (keyset cursors) from the index, or the filesystem
// when the index is not available. Read-only.
import type { ResultPaging, ToolModule } from '../../../src/sdk/index.js';
import type { NotesCtx } from '../settings.js';
import { listNotes, renderList, type ListQuery, type ListResult } from '../lib/listing.js';

/** Over the result budget a page holds fewer notes; next_cursor continues after the last one shown. */
const listPaging: ResultPaging<ListQuery, ListResult> = {
  limit: 'limit',
  size: (o) => o.notes.length,
  next: (input, o) => (o.next_cursor ? { ...input, cursor: o.next_cursor } : undefined),
};

export const listNotesTool: ToolModule = {
  handler: (input: ListQuery, ctx: NotesCtx) => listNotes(ctx, input),
  render: (o: ListResult) => renderList('Notes', o),
  paging: listPaging,
};

export const getRecentTool: ToolModule = {
  handler: (input: Omit<ListQuery, 'order_by'> & { order_by?: 'modified' | 'content_changed' }, ctx: NotesCtx) =>
    listNotes(ctx, { ...input, limit: input.limit ?? 20, order_by: input.order_by ?? 'modified' }),
  render: (o: ListResult) => renderList('Recently changed notes', o),
  paging: listPaging,
};
