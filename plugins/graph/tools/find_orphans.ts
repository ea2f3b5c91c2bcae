// find_orphans: notes with no link in or out (self-links do not count; ambiguous ones do, see isOrphan), newest first.
// Read-only over notes + graph tables; reports how many notes the graph has not seen yet.
import { sql } from 'kysely';
import { defineTool, clampLimit, cursorPaging, folderScope, offsetPager, underFolder } from '../../../src/sdk/index.js';
import type { GraphTools } from '../../../src/generated/graph/index.js';
import { isOrphan, pendingNotes, type GraphCtx } from '../common.js';
import { tagList } from './get_neighborhood.js';

const pages = offsetPager('find_orphans');

export default defineTool<GraphTools['find_orphans']>({
  async handler(input, ctx: GraphCtx) {
    const scope = folderScope(input.folder);
    const folder = scope.folder;
    const limit = clampLimit(input.limit, ctx.settings.graph.orphansCap, 50);
    const start = pages.start(ctx, input);
    const { rows } = await sql<{
      path: string;
      title: string;
      tags: unknown;
      mtime: Date | string;
      dangling: string;
      total: string;
    }>`
      SELECT n.path, n.title, n.tags, n.mtime,
        (SELECT count(*) FROM graph_links d WHERE d.source_id = n.id AND d.target_id IS NULL AND NOT d.ambiguous AND NOT d.attachment) AS dangling,
        count(*) OVER () AS total
      FROM notes n JOIN graph_nodes g ON g.note_id = n.id
      WHERE n.vault_id = ${ctx.vault.id} AND ${underFolder(sql`n.path`, scope)}
        AND ${isOrphan()}
      ORDER BY n.mtime DESC, n.path
      LIMIT ${limit} OFFSET ${start}`.execute(ctx.db);
    const orphans = rows.map((r) => ({
      path: r.path,
      title: r.title,
      tags: tagList(r.tags),
      modified: new Date(r.mtime).toISOString(),
      dangling_links: Number(r.dangling),
    }));
    const total = rows.length ? Number(rows[0].total) : start > 0 ? start : 0;
    return {
      folder,
      total,
      shown: orphans.length,
      not_indexed: await pendingNotes(ctx.db, ctx.vault.id),
      orphans,
      next_cursor: pages.next(ctx, input, start, orphans.length, total),
    };
  },
  render(o) {
    const scope = o.folder ? ` in \`${o.folder}/\`` : '';
    const pending = o.not_indexed ? ` (${o.not_indexed} notes not yet in the link graph)` : '';
    if (o.total === 0) return `No orphan notes${scope}${pending}`;
    const head = `Found ${o.total} orphan notes${scope}${o.shown < o.total ? ` (showing ${o.shown})` : ''}${pending}:`;
    const lines = [
      head,
      ...o.orphans.map(
        (r) =>
          `- \`${r.path}\` — ${r.title}${r.tags.length ? ` [${r.tags.join(', ')}]` : ''} (modified ${r.modified.slice(0, 10)})${r.dangling_links ? ` — ${r.dangling_links} dangling links` : ''}`,
      ),
    ];
    if (o.next_cursor) lines.push(`more: cursor=${o.next_cursor}`);
    return lines.join('\n');
  },
  paging: cursorPaging((o) => o.orphans.length),
});
