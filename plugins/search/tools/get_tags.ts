// get_tags: the vault's tags with note counts, nested tags aggregated into their parents
// (`a/b` counts toward `a`). Reads the host's `notes.tags` column only; never reads note bytes.
import { sql } from 'kysely';
import {
  defineTool,
  type ToolContext,
  clampLimit,
  cursorPaging,
  escapeLike,
  offsetPager,
  tagKey,
} from '../../../src/sdk/index.js';
import type { SearchSettingsSection } from '../settings.js';
import type { SearchTools } from '../../../src/generated/search/index.js';

type GetTagsInput = SearchTools['get_tags']['input'];
type GetTagsOutput = SearchTools['get_tags']['output'];

const pages = offsetPager('get_tags');

export default defineTool<SearchTools['get_tags']>({
  async handler(input: GetTagsInput, ctx: ToolContext<SearchSettingsSection>): Promise<GetTagsOutput> {
    const max = ctx.settings.search.tagsMaxLimit;
    const asked = input.limit ?? 50;
    const limit = clampLimit(asked, max);
    const prefix = tagKey(input.prefix ?? '');
    const start = pages.start(ctx, input);
    const r = await sql<{ tag: string; notes: number; direct: number; total: number }>`
      WITH t AS (
        SELECT DISTINCT n.id, lower(coalesce(e->>'tag', e #>> '{}')) AS tag
        FROM notes n CROSS JOIN LATERAL jsonb_array_elements(
          CASE WHEN jsonb_typeof(n.tags) = 'array' THEN n.tags ELSE '[]'::jsonb END) e
        WHERE n.vault_id = ${ctx.vault.id}
      ), p AS (
        SELECT t.id, array_to_string((string_to_array(t.tag, '/'))[1:i], '/') AS tag,
               (i = cardinality(string_to_array(t.tag, '/'))) AS direct
        FROM t CROSS JOIN LATERAL generate_series(1, cardinality(string_to_array(t.tag, '/'))) i
        WHERE t.tag IS NOT NULL AND t.tag <> ''
      )
      SELECT tag, count(DISTINCT id)::int AS notes, (count(DISTINCT id) FILTER (WHERE direct))::int AS direct,
             (count(*) OVER ())::int AS total
      FROM p WHERE tag <> '' AND tag LIKE ${`${escapeLike(prefix)}%`}
      GROUP BY tag ORDER BY notes DESC, tag LIMIT ${limit} OFFSET ${start}`.execute(ctx.db);
    const total = r.rows[0]?.total ?? start;
    const rows = r.rows.map(({ tag, notes, direct }) => ({ tag, notes, direct }));
    const next_cursor = pages.next(ctx, input, start, rows.length, total);
    return {
      prefix,
      count: rows.length,
      total,
      cut: next_cursor !== null,
      limit_cut: asked > limit,
      rows,
      next_cursor,
    };
  },
  render(o: GetTagsOutput): string {
    const lines = [
      `get_tags${o.prefix ? ` prefix=${o.prefix}` : ''} — ${o.count} of ${o.total} tags (notes incl. nested · direct)`,
    ];
    if (o.next_cursor) lines.push(`more: cursor=${o.next_cursor}`);
    if (o.limit_cut) lines.push('note: limit cut to the server maximum');
    if (!o.rows.length) lines.push('no tags');
    for (const r of o.rows) lines.push(`#${r.tag} ${r.notes}${r.direct !== r.notes ? ` (direct ${r.direct})` : ''}`);
    return lines.join('\n');
  },
  paging: cursorPaging((o: GetTagsOutput) => o.rows.length),
});
