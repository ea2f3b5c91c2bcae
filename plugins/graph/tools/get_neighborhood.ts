// get_neighborhood: undirected breadth-first walk over resolved links, one SQL query per depth level.
// Read-only; never issues a query per node and never follows dangling or self links.
import { sql } from 'kysely';
import { defineTool } from '../../../src/sdk/index.js';
import type { GraphTools } from '../../../src/generated/graph/index.js';
import { findNote, type GraphCtx } from '../common.js';
import { bigintArray, clampLimit } from '../../../src/sdk/query/index.js';

type Output = GraphTools['get_neighborhood']['output'];

type Row = Output['notes'][number];

export default defineTool<GraphTools['get_neighborhood']>({
  async handler(input, ctx: GraphCtx) {
    const s = ctx.settings.graph;
    const note = await findNote(ctx, input.path);
    const depth = clampLimit(input.depth, s.neighborhoodMaxDepth, 1);
    const limit = clampLimit(input.limit, s.neighborhoodCap, 50);
    const seen = new Map<number, { distance: number; via: number }>([[note.id, { distance: 0, via: note.id }]]);
    let frontier = [note.id];
    let truncated = false;
    for (let d = 1; d <= depth && frontier.length > 0 && !truncated; d++) {
      const { rows } = await sql<{ a: string; b: string }>`
        SELECT DISTINCT source_id AS a, target_id AS b FROM graph_links
          WHERE source_id = ANY(${bigintArray(frontier)}) AND target_id IS NOT NULL AND target_id <> source_id
        UNION
        SELECT DISTINCT target_id AS a, source_id AS b FROM graph_links
          WHERE target_id = ANY(${bigintArray(frontier)}) AND target_id <> source_id`.execute(ctx.db);
      // Deterministic parent choice: the lowest note id reached from; ordering by path happens below.
      const found = new Map<number, number>();
      for (const r of rows) {
        const a = Number(r.a);
        const b = Number(r.b);
        if (seen.has(b)) continue;
        const prev = found.get(b);
        if (prev === undefined || a < prev) found.set(b, a);
      }
      const next: number[] = [];
      for (const [id, via] of [...found].sort((x, y) => x[0] - y[0])) {
        if (seen.size - 1 >= limit) {
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
    return { path: note.path, depth, limit, count: notes.length, truncated, notes };
  },
  render(o) {
    if (o.count === 0) return `\`${o.path}\` has no resolved-link neighbours`;
    const head = `Neighborhood of \`${o.path}\` (depth ≤ ${o.depth}, ${o.count} notes${o.truncated ? ', truncated at the limit' : ''}):`;
    return [
      head,
      ...o.notes.map(
        (n) =>
          `- d=${n.distance} **${n.title}** (\`${n.path}\`)${n.tags.length ? ` [${n.tags.join(', ')}]` : ''} via \`${n.via}\``,
      ),
    ].join('\n');
  },
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
