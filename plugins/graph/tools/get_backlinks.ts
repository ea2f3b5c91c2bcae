// get_backlinks: links pointing at one note or attachment, from the graph tables (never reads notes).
// Read-only; self-links and dangling references are never counted, and an ambiguous link is listed for
// every file it could mean, marked ambiguous with its candidates, never silently given to one of them.
import { sql } from 'kysely';
import { defineTool, clampLimit, cursorPaging, offsetPager } from '../../../src/sdk/index.js';
import type { GraphTools } from '../../../src/generated/graph/index.js';
import { clip, findNote, nameKeyOfPath, type GraphCtx } from '../common.js';
import { VaultFiles } from '../vault-files.js';

type Output = GraphTools['get_backlinks']['output'];

type Row = Output['backlinks'][number];

const pages = offsetPager('get_backlinks');

interface LinkRow {
  source: string;
  title: string;
  kind: string;
  embed: boolean;
  raw: string;
  line: number;
  start_offset: number;
  anchor: string | null;
  alias: string | null;
  ambiguous: boolean;
  candidates: string[];
  target: string;
}

export default defineTool<GraphTools['get_backlinks']>({
  async handler(input, ctx: GraphCtx) {
    const s = ctx.settings.graph;
    const limit = clampLimit(input.limit, s.backlinksCap, 50);
    const start = pages.start(ctx, input);
    const files = new VaultFiles(ctx);
    const clean = input.path.replace(/\\/g, '/').replace(/^\/+/, '');
    let path: string;
    let rows: LinkRow[];
    if (!/\.md$/i.test(clean) && (await files.has(clean))) {
      // An attachment: the index marks links naming another kind of file; resolve those that share its name.
      path = clean;
      const { rows: named } = await sql<LinkRow>`
        SELECT n.path AS source, n.title, l.kind, l.embed, l.raw, l.line, l.start_offset, l.anchor, l.alias, l.target, false AS ambiguous, '[]'::jsonb AS candidates
        FROM graph_links l JOIN notes n ON n.id = l.source_id
        WHERE l.vault_id = ${ctx.vault.id} AND l.attachment AND l.name_key = ${nameKeyOfPath(path)}
        ORDER BY n.path, l.start_offset`.execute(ctx.db);
      rows = [];
      for (const r of named) {
        const f = await files.resolve(r.target, r.source);
        if (f.resolved === path) rows.push(r);
        else if (f.ambiguous && f.candidates.includes(path))
          rows.push({ ...r, ambiguous: true, candidates: f.candidates });
      }
    } else {
      const note = await findNote(ctx, input.path);
      path = note.path;
      ({ rows } = await sql<LinkRow>`
        SELECT n.path AS source, n.title, l.kind, l.embed, l.raw, l.line, l.start_offset, l.anchor, l.alias, l.target, l.ambiguous, l.candidates
        FROM graph_links l JOIN notes n ON n.id = l.source_id
        WHERE (l.target_id = ${note.id} AND l.source_id <> ${note.id})
           OR (l.vault_id = ${ctx.vault.id} AND l.name_key = ${nameKeyOfPath(note.path)} AND l.ambiguous AND l.candidates @> ${JSON.stringify([note.path])}::jsonb)
        ORDER BY l.ambiguous, n.path, l.start_offset`.execute(ctx.db));
    }
    const backlinks = rows.slice(start, start + limit).map(
      (r): Row => ({
        source: r.source,
        title: r.title,
        kind: r.kind,
        embed: r.embed,
        text: clip(r.raw, s.linkTextChars),
        line: r.line,
        position: r.start_offset,
        anchor: r.anchor,
        alias: r.alias,
        ambiguous: r.ambiguous,
        ...(r.ambiguous ? { candidates: r.candidates } : {}),
      }),
    );
    return {
      path,
      total: rows.length,
      ambiguous: rows.filter((r) => r.ambiguous).length,
      shown: backlinks.length,
      backlinks,
      next_cursor: pages.next(ctx, input, start, backlinks.length, rows.length),
    };
  },
  render(o) {
    if (o.total === 0) return `No backlinks to \`${o.path}\``;
    const head = `Found ${o.total - o.ambiguous} backlinks to \`${o.path}\`${o.ambiguous ? `, and ${o.ambiguous} ambiguous links that could mean it` : ''}${o.shown < o.total ? ` (showing ${o.shown})` : ''}:`;
    const lines = [
      head,
      ...o.backlinks.map(
        (b) =>
          `- **${b.title}** (\`${b.source}\`) — ${b.kind} \`${b.text}\` @ line ${b.line}, pos ${b.position}${b.ambiguous ? ` (ambiguous: could mean any of ${(b.candidates ?? []).map((c) => `\`${c}\``).join(', ')})` : ''}`,
      ),
    ];
    if (o.next_cursor) lines.push(`more: cursor=${o.next_cursor}`);
    return lines.join('\n');
  },
  paging: cursorPaging((o) => o.backlinks.length),
});
