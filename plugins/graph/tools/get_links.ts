// get_links: a note's outgoing links in document order, grouped resolved / ambiguous / attachments / dangling.
// Read-only, from the graph tables plus a listing of the vault's files; never reads the note itself.
import { sql } from 'kysely';
import { defineTool, clampLimit, cursorPaging, offsetPager } from '../../../src/sdk/index.js';
import type { GraphTools } from '../../../src/generated/graph/index.js';
import { clip, findNote, type GraphCtx } from '../common.js';
import { VaultFiles } from '../vault-files.js';

type Output = GraphTools['get_links']['output'];

type LinkRow = Output['links'][number];

type Status = LinkRow['status'];

const pages = offsetPager('get_links');

export default defineTool<GraphTools['get_links']>({
  async handler(input, ctx: GraphCtx) {
    const s = ctx.settings.graph;
    const note = await findNote(ctx, input.path);
    const limit = clampLimit(input.limit, s.linksCap, 100);
    const start = pages.start(ctx, input);
    const node = await sql<{
      link_count: number;
      links_truncated: boolean;
    }>`SELECT link_count, links_truncated FROM graph_nodes WHERE note_id = ${note.id}`.execute(ctx.db);
    const counts = await sql<{ status: Status; n: string }>`
      SELECT CASE WHEN ambiguous THEN 'ambiguous' WHEN target_id IS NOT NULL THEN 'resolved' ELSE 'dangling' END AS status, count(*) AS n
      FROM graph_links WHERE source_id = ${note.id} AND NOT attachment GROUP BY 1`.execute(ctx.db);
    // Links naming another kind of file: found among the vault's files (attachment), several (ambiguous) or none (dangling).
    const files = new VaultFiles(ctx);
    const named = await sql<{
      ord: number;
      target: string;
    }>`SELECT ord, target FROM graph_links WHERE source_id = ${note.id} AND attachment`.execute(ctx.db);
    const fileOf = new Map<number, { status: Status; path: string | null; candidates: string[] }>();
    for (const r of named.rows) {
      const f = await files.resolve(r.target, note.path);
      fileOf.set(Number(r.ord), {
        status: f.ambiguous ? 'ambiguous' : f.resolved ? 'attachment' : 'dangling',
        path: f.resolved,
        candidates: f.ambiguous ? f.candidates : [],
      });
    }
    const { rows } = await sql<{
      ord: number;
      kind: string;
      embed: boolean;
      raw: string;
      target: string;
      anchor: string | null;
      alias: string | null;
      line: number;
      start_offset: number;
      target_id: string | null;
      ambiguous: boolean;
      attachment: boolean;
      candidates: string[];
      rpath: string | null;
      rtitle: string | null;
    }>`
      SELECT l.ord, l.kind, l.embed, l.raw, l.target, l.anchor, l.alias, l.line, l.start_offset, l.target_id, l.ambiguous, l.attachment, l.candidates,
        t.path AS rpath, t.title AS rtitle
      FROM graph_links l LEFT JOIN notes t ON t.id = l.target_id
      WHERE l.source_id = ${note.id} ORDER BY l.ord LIMIT ${limit} OFFSET ${start}`.execute(ctx.db);
    const c: Record<Status, number> = { resolved: 0, ambiguous: 0, attachment: 0, dangling: 0 };
    for (const r of counts.rows) c[r.status] += Number(r.n);
    for (const f of fileOf.values()) c[f.status]++;
    const links = rows.map((r): LinkRow => {
      const f = r.attachment ? fileOf.get(Number(r.ord)) : undefined;
      return {
        status: f ? f.status : r.ambiguous ? 'ambiguous' : r.target_id !== null ? 'resolved' : 'dangling',
        kind: r.kind,
        embed: r.embed,
        text: clip(r.raw, s.linkTextChars),
        target: r.target,
        anchor: r.anchor,
        alias: r.alias,
        line: r.line,
        position: r.start_offset,
        resolved_path: f ? f.path : r.rpath,
        resolved_title: f ? null : r.rtitle,
        candidates: f ? f.candidates : (r.candidates ?? []),
      };
    });
    const stored = c.resolved + c.ambiguous + c.attachment + c.dangling;
    return {
      path: note.path,
      indexed: node.rows.length > 0,
      truncated: node.rows[0]?.links_truncated ?? false,
      stored,
      total_in_note: node.rows[0]?.link_count ?? 0,
      shown: links.length,
      counts: c,
      links,
      next_cursor: pages.next(ctx, input, start, links.length, stored),
    };
  },
  render(o) {
    const c = o.counts;
    const head = `\`${o.path}\` — ${c.resolved} resolved, ${c.ambiguous} ambiguous, ${c.attachment} attachments, ${c.dangling} dangling — truncated: ${o.truncated}${o.indexed ? '' : ' (not indexed yet)'}`;
    if (o.stored === 0)
      return `\`${o.path}\` has no outgoing links — truncated: ${o.truncated}${o.indexed ? '' : ' (not indexed yet)'}`;
    const out = [`${head}:`];
    const group = (status: Status, title: string, line: (l: LinkRow) => string) => {
      const rows = o.links.filter((l) => l.status === status);
      if (rows.length) out.push(`**${title}:**`, ...rows.map(line));
    };
    group(
      'resolved',
      'Resolved',
      (l) => `- ${l.kind} → **${l.resolved_title}** (\`${l.resolved_path}\`) — \`${l.text}\` (line ${l.line})`,
    );
    group(
      'ambiguous',
      'Ambiguous',
      (l) =>
        `- ${l.kind} → \`${l.target}\` — \`${l.text}\` (line ${l.line}); no file chosen, candidates: ${l.candidates.map((p) => `\`${p}\``).join(', ')}`,
    );
    group(
      'attachment',
      'Attachments',
      (l) =>
        `- ${l.kind} → \`${l.resolved_path}\`${l.anchor ? ` (subpath #${l.anchor})` : ''} — \`${l.text}\` (line ${l.line})`,
    );
    group('dangling', 'Dangling', (l) => `- ${l.kind} → \`${l.target}\` — \`${l.text}\` (line ${l.line})`);
    if (o.next_cursor) out.push(`… showing ${o.shown} of ${o.stored} stored links; more: cursor=${o.next_cursor}`);
    if (o.truncated)
      out.push(`… the note has ${o.total_in_note} links, over the per-note cap: only the first ${o.stored} are stored`);
    return out.join('\n');
  },
  paging: cursorPaging((o) => o.links.length),
});
