// get_backlinks: resolved links pointing at one note, from the graph tables (never reads notes).
// Read-only; self-links and dangling references are never counted.
import { sql } from 'kysely';
import type { ToolModule } from '../../../src/sdk/types.js';
import { clamp, clip, findNote, type GraphCtx } from '../common.js';

interface Input { path: string; limit?: number }
interface Row { source: string; title: string; kind: string; embed: boolean; text: string; line: number; position: number; anchor: string | null; alias: string | null; ambiguous: boolean }
interface Output { path: string; total: number; shown: number; backlinks: Row[] }

export const getBacklinks: ToolModule<Input, Output> = {
  async handler(input, ctx: GraphCtx) {
    const s = ctx.settings.graph;
    const note = await findNote(ctx, input.path);
    const limit = clamp(input.limit, 50, s.backlinksCap);
    const { rows } = await sql<{ source: string; title: string; kind: string; embed: boolean; raw: string; line: number; start_offset: number; anchor: string | null; alias: string | null; ambiguous: boolean; total: string }>`
      SELECT n.path AS source, n.title, l.kind, l.embed, l.raw, l.line, l.start_offset, l.anchor, l.alias, l.ambiguous, count(*) OVER () AS total
      FROM graph_links l JOIN notes n ON n.id = l.source_id
      WHERE l.target_id = ${note.id} AND l.source_id <> ${note.id}
      ORDER BY n.path, l.start_offset
      LIMIT ${limit}`.execute(ctx.db);
    const backlinks = rows.map((r) => ({
      source: r.source, title: r.title, kind: r.kind, embed: r.embed, text: clip(r.raw, s.linkTextChars), line: r.line, position: r.start_offset,
      anchor: r.anchor, alias: r.alias, ambiguous: r.ambiguous,
    }));
    return { path: note.path, total: rows.length ? Number(rows[0].total) : 0, shown: backlinks.length, backlinks };
  },
  render(o) {
    if (o.total === 0) return `No backlinks to \`${o.path}\``;
    const head = `Found ${o.total} backlinks to \`${o.path}\`${o.shown < o.total ? ` (showing ${o.shown})` : ''}:`;
    return [head, ...o.backlinks.map((b) => `- **${b.title}** (\`${b.source}\`) — ${b.kind} \`${b.text}\` @ line ${b.line}, pos ${b.position}${b.ambiguous ? ' (ambiguous link)' : ''}`)].join('\n');
  },
};
