// get_neighborhood: undirected breadth-first walk over resolved links, one SQL query per depth level.
// Read-only; never issues a query per node and never follows dangling or self links.
import { sql } from 'kysely';
import { defineTool, bigintArray, clampLimit, cursorPaging, offsetPager } from '../../../src/sdk/index.js';
import type { GraphTools } from '../../../src/generated/graph/index.js';
import { findNote, type GraphCtx } from '../common.js';

type Output = GraphTools['get_neighborhood']['output'];

type Row = Output['notes'][number];

const pages = offsetPager('get_neighborhood');

export default defineTool<GraphTools['get_neighborhood']>({
  async handler(input, ctx: GraphCtx) {
    const s = ctx.settings.graph;
    const note = await findNote(ctx, input.path);
    const depth = clampLimit(input.depth, s.neighborhoodMaxDepth, 1);
    const limit = clampLimit(input.limit, s.neighborhoodCap, 50);
    const start = pages.start(ctx, input);
    // Walk until one note past this page: each level admits its notes in path order, so the walk's first N
    // notes are the first N of the (distance, path) order and every page is a slice of one answer.
    const want = start + limit + 1;
    const seen = new Map<number, { distance: number; via: number }>([[note.id, { distance: 0, via: note.id }]]);
    let frontier = [note.id];
    let truncated = false;
    for (let d = 1; d <= depth && frontier.length > 0 && !truncated; d++) {
      const { rows } = await sql<{ a: string; b: string; path: string }>`
        SELECT x.a, x.b, n.path FROM (
          SELECT DISTINCT source_id AS a, target_id AS b FROM graph_links
            WHERE source_id = ANY(${bigintArray(frontier)}) AND target_id IS NOT NULL AND target_id <> source_id
          UNION
          SELECT DISTINCT target_id AS a, source_id AS b FROM graph_links
            WHERE target_id = ANY(${bigintArray(frontier)}) AND target_id <> source_id) x
        JOIN notes n ON n.id = x.b`.execute(ctx.db);
      // Deterministic parent choice: the lowest note id reached from; ordering by path happens below.
      const found = new Map<number, { via: number; path: string }>();
      for (const r of rows) {
        const a = Number(r.a);
        const b = Number(r.b);
        if (seen.has(b)) continue;
        const prev = found.get(b);
        if (prev === undefined || a < prev.via) found.set(b, { via: a, path: r.path });
      }
      const next: number[] = [];
      const level = [...found].sort((x, y) => (x[1].path < y[1].path ? -1 : x[1].path > y[1].path ? 1 : 0));
      for (const [id, { via }] of level) {
        if (seen.size - 1 >= want) {
          truncated = true;
          break;
        }
        seen.set(id, { distance: d, via });
        next.push(id);
      }
      frontier = next;
    }
    const ids = [...seen.keys()];
    const { rows } = await sql<{ id: string; path: string; title: string; tags: unknown }>`
      SELECT id, path, title, tags FROM notes WHERE id = ANY(${bigintArray(ids)})`.execute(ctx.db);
    const byId = new Map(rows.map((r) => [Number(r.id), r]));
    const notes: Row[] = [];
    for (const [id, v] of seen) {
      if (id === note.id) continue;
      const r = byId.get(id);
      if (!r) continue;
      notes.push({
        path: r.path,
        title: r.title,
        tags: tagList(r.tags),
        distance: v.distance,
        via: byId.get(v.via)?.path ?? '',
      });
    }
    notes.sort((a, b) => a.distance - b.distance || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    const page = notes.slice(start, start + limit);
    const more = truncated || notes.length > start + limit;
    return {
      path: note.path,
      depth,
      limit,
      count: page.length,
      truncated: more,
      notes: page,
      next_cursor: pages.next(ctx, input, start, page.length, more),
    };
  },
  render(o) {
    if (o.count === 0) return `\`${o.path}\` has no resolved-link neighbours`;
    const head = `Neighborhood of \`${o.path}\` (depth ≤ ${o.depth}, ${o.count} notes${o.truncated ? ', more on the next page' : ''}):`;
    const lines = [
      head,
      ...o.notes.map(
        (n) =>
          `- d=${n.distance} **${n.title}** (\`${n.path}\`)${n.tags.length ? ` [${n.tags.join(', ')}]` : ''} via \`${n.via}\``,
      ),
    ];
    if (o.next_cursor) lines.push(`more: cursor=${o.next_cursor}`);
    return lines.join('\n');
  },
  paging: cursorPaging((o) => o.notes.length),
});

export function tagList(tags: unknown): string[] {
  if (!Array.isArray(tags)) return [];
  return tags.map((t) =>
    typeof t === 'string'
      ? t
      : typeof t === 'object' && t !== null && 'tag' in t
        ? String((t as { tag: unknown }).tag)
        : String(t),
  );
}
