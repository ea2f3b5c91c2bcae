// read_revision: the content of one kept version (text cut at history.maxReadChars; binary summarised).
import { defineTool, clampLimit, textWindow, windowPaging } from '../../../src/sdk/index.js';
import type { HistoryTools } from '../../../src/generated/history/index.js';
import { asText, findRevision, historyReadPath, revisionId, settingsOf, versionBytes } from '../lib.js';

export default defineTool<HistoryTools['read_revision']>({
  async handler(input, ctx) {
    const path = await historyReadPath(ctx, input.path);
    const row = await findRevision(ctx, path, input.revision);
    const base = { path, revision: revisionId(row.id), kind: row.kind, content_hash: row.hash, size: row.size };
    const bytes = await versionBytes(ctx, row);
    if (!bytes)
      return {
        ...base,
        binary: false,
        content: null,
        truncated: false,
        next_offset: null,
        summary: row.skipped ? `This version was not kept: ${row.skipped}.` : 'This version is no longer kept.',
      };
    const text = asText(bytes);
    if (text === undefined)
      return {
        ...base,
        binary: true,
        content: null,
        truncated: false,
        next_offset: null,
        summary: `Binary content, ${bytes.length} bytes (${row.hash}); not shown.`,
      };
    const w = textWindow(text, input.offset ?? 0, clampLimit(input.limit, settingsOf(ctx).maxReadChars));
    return {
      ...base,
      binary: false,
      content: w.content,
      truncated: w.next_offset !== null,
      next_offset: w.next_offset,
    };
  },
  render(o) {
    const head = `${o.path} at ${o.revision} (${o.kind}, ${o.content_hash ?? 'no content'})`;
    if (o.content === null) return `${head}: ${o.summary ?? ''}`;
    const more = o.next_offset !== null ? `\n… more: offset=${o.next_offset}` : '';
    return `${head}:\n\n${o.content}${more}`;
  },
  paging: windowPaging((o) => o.content?.length ?? 0),
});
