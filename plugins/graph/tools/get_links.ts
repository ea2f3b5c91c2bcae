// get_links: a note's outgoing links in document order, grouped resolved / ambiguous / attachments / dangling.
// Read-only, from the graph tables; never reads the note itself.
import { sql } from 'kysely';
import type { ToolModule } from '../../../src/sdk/types.js';
import { clamp, clip, findNote, type GraphCtx } from '../common.js';

type Status = 'resolved' | 'ambiguous' | 'attachment' | 'dangling';
interface Input { path: string; limit?: number }
interface LinkRow {
  status: Status; kind: string; embed: boolean; text: string; target: string; anchor: string | null; alias: string | null;
  line: number; position: number; resolved_path: string | null; resolved_title: string | null; candidates: string[];
}
interface Output {
  path: string; truncated: boolean; stored: number; total_in_note: number; shown: number;
  counts: Record<Status, number>; links: LinkRow[]; indexed: boolean;
}

export const getLinks: ToolModule<Input, Output> = {
  async handler(input, ctx: GraphCtx) {
    const s = ctx.settings.graph;
    const note = await findNote(ctx, input.path);
    const limit = clamp(input.limit, 100, s.linksCap);
    const node = await sql<{ link_count: number; links_truncated: boolean }>`SELECT link_count, links_truncated FROM graph_nodes WHERE note_id = ${note.id}`.execute(ctx.db);
    const counts = await sql<{ status: Status; n: string }>`
      SELECT CASE WHEN ambiguous THEN 'ambiguous' WHEN target_id IS NOT NULL THEN 'resolved' WHEN attachment THEN 'attachment' ELSE 'dangling' END AS status, count(*) AS n
      FROM graph_links WHERE source_id = ${note.id} GROUP BY 1`.execute(ctx.db);
    const { rows } = await sql<{ kind: string; embed: boolean; raw: string; target: string; anchor: string | null; alias: string | null; line: number; start_offset: number; target_id: string | null; ambiguous: boolean; attachment: boolean; candidates: string[]; rpath: string | null; rtitle: string | null }>`
      SELECT l.kind, l.embed, l.raw, l.target, l.anchor, l.alias, l.line, l.start_offset, l.target_id, l.ambiguous, l.attachment, l.candidates,
        t.path AS rpath, t.title AS rtitle
      FROM graph_links l LEFT JOIN notes t ON t.id = l.target_id
      WHERE l.source_id = ${note.id} ORDER BY l.ord LIMIT ${limit}`.execute(ctx.db);
    const c: Record<Status, number> = { resolved: 0, ambiguous: 0, attachment: 0, dangling: 0 };
    for (const r of counts.rows) c[r.status] = Number(r.n);
    const links = rows.map((r): LinkRow => ({
      status: r.ambiguous ? 'ambiguous' : r.target_id !== null ? 'resolved' : r.attachment ? 'attachment' : 'dangling',
      kind: r.kind, embed: r.embed, text: clip(r.raw, s.linkTextChars), target: r.target, anchor: r.anchor, alias: r.alias,
      line: r.line, position: r.start_offset, resolved_path: r.rpath, resolved_title: r.rtitle, candidates: r.candidates ?? [],
    }));
    const stored = c.resolved + c.ambiguous + c.attachment + c.dangling;
    return {
      path: note.path, indexed: node.rows.length > 0, truncated: node.rows[0]?.links_truncated ?? false, stored,
      total_in_note: node.rows[0]?.link_count ?? 0, shown: links.length, counts: c, links,
    };
  },
  render(o) {
    const c = o.counts;
    const head = `\`${o.path}\` — ${c.resolved} resolved, ${c.ambiguous} ambiguous, ${c.attachment} attachments, ${c.dangling} dangling — truncated: ${o.truncated}${o.indexed ? '' : ' (not indexed yet)'}`;
    if (o.stored === 0) return `\`${o.path}\` has no outgoing links — truncated: ${o.truncated}${o.indexed ? '' : ' (not indexed yet)'}`;
    const out = [`${head}:`];
    const group = (status: Status, title: string, line: (l: LinkRow) => string) => {
      const rows = o.links.filter((l) => l.status === status);
      if (rows.length) out.push(`**${title}:**`, ...rows.map(line));
    };
    group('resolved', 'Resolved', (l) => `- ${l.kind} → **${l.resolved_title}** (\`${l.resolved_path}\`) — \`${l.text}\` (line ${l.line})`);
    group('ambiguous', 'Ambiguous', (l) => `- ${l.kind} → \`${l.resolved_path ?? l.target}\` — \`${l.text}\` (line ${l.line}); candidates: ${l.candidates.map((p) => `\`${p}\``).join(', ')}`);
    group('attachment', 'Attachments', (l) => `- ${l.kind} → \`${l.target}\` — \`${l.text}\` (line ${l.line})`);
    group('dangling', 'Dangling', (l) => `- ${l.kind} → \`${l.target}\` — \`${l.text}\` (line ${l.line})`);
    if (o.shown < o.stored) out.push(`… showing ${o.shown} of ${o.stored} stored links (raise limit, up to the cap, for more)`);
    if (o.truncated) out.push(`… the note has ${o.total_in_note} links, over the per-note cap: only the first ${o.stored} are stored`);
    return out.join('\n');
  },
};
