// fetch: the ChatGPT connector / deep-research fetch — `fetch(id)` → {id,title,text,url,metadata} reading
// the note, rendered as the JSON those clients parse, narrowed under the result budget. Never writes.
import { sql } from 'kysely';
import { defineTool, type ToolContext } from '../../../src/sdk/index.js';
import type { SearchTools } from '../../../src/generated/search/index.js';
import type { SearchSettingsSection } from '../settings.js';
import { urlsOf, vaultName } from '../connector.js';

type FetchInput = SearchTools['fetch']['input'];
type ConnectorFetchOutput = SearchTools['fetch']['output'];

export default defineTool<SearchTools['fetch']>({
  async handler(input: FetchInput, ctx: ToolContext<SearchSettingsSection>): Promise<ConnectorFetchOutput> {
    const path = ctx.vault.fs.checkPath(input.id);
    const r = await sql<{
      title: string;
      tags: unknown;
      aliases: unknown;
      content_hash: string;
      size: number;
      mtime: Date | string;
    }>`
      SELECT title, tags, aliases, content_hash, size, mtime FROM notes WHERE vault_id = ${ctx.vault.id} AND path = ${path}`.execute(
      ctx.db,
    );
    const row = r.rows[0];
    if (!row) ctx.refuse('not_found', { path });
    const max = Math.min(input.limit ?? Number.POSITIVE_INFINITY, ctx.settings.search.connector.fetchMaxChars);
    const text = await ctx.vault.fs.readText(path, { maxBytes: ctx.settings.search.connector.fetchMaxBytes });
    const offset = input.offset ?? 0;
    if (offset > 0 && offset >= text.length)
      ctx.refuse('invalid_arguments', {
        problems: `offset ${offset} is at or past the end of the text (${text.length} chars)`,
      });
    let end = Math.min(text.length, offset + max);
    // Never cut a surrogate pair in half.
    if (end < text.length && end > offset && /[\ud800-\udbff]/.test(text[end - 1])) end--;
    const truncated = offset > 0 || end < text.length;
    const shown =
      end < text.length
        ? `${text.slice(offset, end)}\n\n[… cut at character ${end} of ${text.length}; continue with fetch(id=${JSON.stringify(path)}, offset=${end}), or read_note(path, section=…)]`
        : text.slice(offset);
    const strings = (v: unknown): string[] =>
      Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : String((x as { tag?: string })?.tag ?? x))) : [];
    return {
      id: path,
      title: row.title,
      text: shown,
      ...urlsOf(ctx, vaultName(ctx), path),
      metadata: {
        path,
        tags: strings(row.tags),
        aliases: strings(row.aliases),
        content_hash: row.content_hash,
        size: row.size,
        modified: new Date(row.mtime).toISOString(),
        chars: text.length,
        truncated,
        offset,
        ...(end < text.length ? { next_offset: end } : {}),
      },
    };
  },
  render(o: ConnectorFetchOutput): string {
    return JSON.stringify(o);
  },
  // Over the result budget the text narrows; metadata.next_offset continues it.
  paging: {
    limit: 'limit',
    size: (o: ConnectorFetchOutput) =>
      (o.metadata.next_offset ?? o.metadata.offset + o.text.length) - o.metadata.offset,
    next: (input: FetchInput, o: ConnectorFetchOutput) =>
      o.metadata.next_offset === undefined ? undefined : { ...input, offset: o.metadata.next_offset },
  },
});
