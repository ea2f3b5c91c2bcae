// get_recent: Recently changed notes.
// list_notes and get_recent: paged note listings (keyset cursors) from the index, or the filesystem
// when the index is not available. Read-only.
import { defineTool } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';
import { listNotes, listPaging, renderList } from '../lib/listing.js';

export default defineTool<NotesTools['get_recent']>({
  handler: (input, ctx: NotesCtx) =>
    listNotes(ctx, { ...input, limit: input.limit ?? 20, order_by: input.order_by ?? 'modified' }),
  render: (o) => renderList('Recently changed notes', o),
  paging: listPaging,
});
