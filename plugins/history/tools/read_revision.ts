// read_revision: the content of one kept version (text cut at history.maxReadChars; binary summarised).
import { defineTool } from '../../../src/sdk/index.js';
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
        summary: row.skipped ? `This version was not kept: ${row.skipped}.` : 'This version is no longer kept.',
      };
    const text = asText(bytes);
    if (text === undefined)
      return {
        ...base,
        binary: true,
        content: null,
        truncated: false,
        summary: `Binary content, ${bytes.length} bytes (${row.hash}); not shown.`,
      };
    const max = settingsOf(ctx).maxReadChars;
    return {
      ...base,
      binary: false,
      content: text.length > max ? text.slice(0, max) : text,
      truncated: text.length > max,
    };
  },
  render(o) {
    const head = `${o.path} at ${o.revision} (${o.kind}, ${o.content_hash ?? 'no content'})`;
    if (o.content === null) return `${head}: ${o.summary ?? ''}`;
    return `${head}${o.truncated ? ' — cut at history.maxReadChars' : ''}:\n\n${o.content}`;
  },
});
