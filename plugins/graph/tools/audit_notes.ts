// audit_notes: vault hygiene report from the index — orphans, dangling links by missing target, untagged
// notes, duplicate titles/basenames, ambiguous links, frontmatter errors. Read-only; never reads notes
// (links naming attachments are checked against a listing of the vault's files).
import { sql } from 'kysely';
import { defineTool, clampLimit, folderScope, underFolder } from '../../../src/sdk/index.js';
import type { GraphTools } from '../../../src/generated/graph/index.js';
import { isOrphan, pendingNotes, type GraphCtx } from '../common.js';
import { VaultFiles } from '../vault-files.js';

type Output = GraphTools['audit_notes']['output'];

type Section = Output['sections'][number];

export const AUDIT_CLASSES = [
  'orphans',
  'dangling_links',
  'untagged',
  'duplicate_titles',
  'duplicate_basenames',
  'ambiguous_links',
  'frontmatter_errors',
  'normalization_twins',
] as const satisfies readonly Section['class'][];

const SAMPLE = 5;

export default defineTool<GraphTools['audit_notes']>({
  async handler(input, ctx: GraphCtx) {
    const scope = folderScope(input.folder);
    const folder = scope.folder;
    const limit = clampLimit(input.limit, ctx.settings.graph.auditCapPerClass, 20);
    const offset = input.offset ?? 0;
    const classes = input.classes && input.classes.length ? [...new Set(input.classes)] : [...AUDIT_CLASSES];
    const v = ctx.vault.id;
    const inScope = underFolder(sql`n.path`, scope);
    const sections: Section[] = [];
    const files = new VaultFiles(ctx);
    let attachments:
      | Array<{
          target: string;
          source: string;
          status: 'attachment' | 'ambiguous' | 'dangling';
          detail: string | null;
        }>
      | undefined;
    const attachmentLinks = async () => {
      if (attachments) return attachments;
      const { rows } = await sql<{ target: string; source: string }>`
        SELECT l.target, n.path AS source FROM graph_links l JOIN notes n ON n.id = l.source_id
        WHERE l.vault_id = ${v} AND l.attachment AND ${inScope} ORDER BY n.path, l.ord`.execute(ctx.db);
      attachments = [];
      for (const r of rows) {
        const f = await files.resolve(r.target, r.source);
        attachments.push({
          ...r,
          status: f.ambiguous ? 'ambiguous' : f.resolved ? 'attachment' : 'dangling',
          detail: f.ambiguous ? JSON.stringify(f.candidates) : null,
        });
      }
      return attachments;
    };
    for (const cls of classes) {
      let q;
      switch (cls) {
        case 'orphans':
          q = sql`SELECT n.path AS key, 1 AS count, jsonb_build_array(n.path) AS paths, NULL AS detail FROM notes n JOIN graph_nodes g ON g.note_id = n.id
            WHERE n.vault_id = ${v} AND ${inScope}
              AND ${isOrphan()}
            ORDER BY n.path`;
          break;
        case 'dangling_links':
          q = sql`SELECT l.target AS key, count(*) AS count, (jsonb_agg(DISTINCT n.path))  AS paths, NULL AS detail
            FROM graph_links l JOIN notes n ON n.id = l.source_id
            WHERE l.vault_id = ${v} AND l.target_id IS NULL AND NOT l.ambiguous AND NOT l.attachment AND l.target <> '' AND ${inScope}
            GROUP BY l.target ORDER BY count(*) DESC, l.target`;
          break;
        case 'untagged':
          q = sql`SELECT n.path AS key, 1 AS count, jsonb_build_array(n.path) AS paths, NULL AS detail FROM notes n
            WHERE n.vault_id = ${v} AND ${inScope} AND (n.tags IS NULL OR n.tags = '[]'::jsonb) ORDER BY n.path`;
          break;
        case 'duplicate_titles':
          q = sql`SELECT lower(n.title) AS key, count(*) AS count, jsonb_agg(n.path ORDER BY n.path) AS paths, NULL AS detail FROM notes n
            WHERE n.vault_id = ${v} AND ${inScope} GROUP BY lower(n.title) HAVING count(*) > 1 ORDER BY count(*) DESC, 1`;
          break;
        case 'duplicate_basenames':
          q = sql`SELECT g.name_key AS key, count(*) AS count, jsonb_agg(n.path ORDER BY n.path) AS paths, NULL AS detail
            FROM graph_nodes g JOIN notes n ON n.id = g.note_id
            WHERE g.vault_id = ${v} AND ${inScope} GROUP BY g.name_key HAVING count(*) > 1 ORDER BY count(*) DESC, 1`;
          break;
        case 'ambiguous_links':
          q = sql`SELECT l.target AS key, count(*) AS count, jsonb_agg(DISTINCT n.path) AS paths, min(l.candidates::text) AS detail
            FROM graph_links l JOIN notes n ON n.id = l.source_id
            WHERE l.vault_id = ${v} AND l.ambiguous AND ${inScope} GROUP BY l.target ORDER BY count(*) DESC, l.target`;
          break;
        case 'frontmatter_errors':
          q = sql`SELECT n.path AS key, 1 AS count, jsonb_build_array(n.path) AS paths, g.fm_error AS detail
            FROM graph_nodes g JOIN notes n ON n.id = g.note_id
            WHERE g.vault_id = ${v} AND g.fm_error IS NOT NULL AND ${inScope} ORDER BY n.path`;
          break;
        case 'normalization_twins':
          q = sql`SELECT normalize(n.path, NFC) AS key, count(*) AS count, jsonb_agg(n.path ORDER BY n.path) AS paths, NULL AS detail FROM notes n
            WHERE n.vault_id = ${v} AND ${inScope} GROUP BY normalize(n.path, NFC) HAVING count(*) > 1 ORDER BY 1`;
          break;
      }
      if (cls === 'dangling_links' || cls === 'ambiguous_links') {
        // Links naming other kinds of files are settled against the vault's files, then merged in.
        const { rows } = await sql<{
          key: string;
          count: string | number;
          paths: string[];
          detail: string | null;
        }>`${q}`.execute(ctx.db);
        const merged = new Map(
          rows.map((r) => [
            r.key,
            { key: r.key, count: Number(r.count), paths: new Set(r.paths ?? []), detail: r.detail },
          ]),
        );
        for (const a of await attachmentLinks()) {
          if (cls === 'dangling_links' ? a.status !== 'dangling' : a.status !== 'ambiguous') continue;
          const m = merged.get(a.target) ?? { key: a.target, count: 0, paths: new Set<string>(), detail: a.detail };
          m.count++;
          m.paths.add(a.source);
          merged.set(a.target, m);
        }
        const all = [...merged.values()].sort(
          (x, y) => y.count - x.count || (x.key < y.key ? -1 : x.key > y.key ? 1 : 0),
        );
        sections.push({
          class: cls,
          total: all.length,
          items: all.slice(offset, offset + limit).map((r) => {
            const paths = [...r.paths].sort();
            return {
              key: r.key,
              count: r.count,
              paths: paths.slice(0, SAMPLE),
              paths_total: paths.length,
              ...(r.detail ? { detail: r.detail } : {}),
            };
          }),
        });
        continue;
      }
      const { rows } = await sql<{
        key: string;
        count: string | number;
        paths: string[];
        detail: string | null;
        total: string;
      }>`
        SELECT x.*, count(*) OVER () AS total FROM (${q}) x LIMIT ${limit} OFFSET ${offset}`.execute(ctx.db);
      // Past the last item no row carries the total: count it on its own.
      const total = rows.length
        ? Number(rows[0].total)
        : offset > 0
          ? Number((await sql<{ n: string }>`SELECT count(*) AS n FROM (${q}) x`.execute(ctx.db)).rows[0].n)
          : 0;
      sections.push({
        class: cls,
        total,
        items: rows.map((r) => ({
          key: r.key,
          count: Number(r.count),
          paths: (r.paths ?? []).slice(0, SAMPLE),
          paths_total: (r.paths ?? []).length,
          ...(r.detail ? { detail: r.detail } : {}),
        })),
      });
    }
    const more = sections.some((s) => s.total > offset + s.items.length && s.items.length > 0);
    return {
      folder,
      limit,
      offset,
      ...(more ? { next_offset: offset + limit } : {}),
      not_indexed: await pendingNotes(ctx.db, ctx.vault.id),
      sections,
    };
  },
  render(o) {
    const out = [
      `Audit of ${o.folder ? `\`${o.folder}/\`` : 'the vault'} (up to ${o.limit} per class${o.offset ? ` after the first ${o.offset}` : ''}${o.not_indexed ? `; ${o.not_indexed} notes not yet in the link graph` : ''}):`,
    ];
    for (const s of o.sections) {
      const shown = o.offset
        ? ` (showing ${s.items.length ? `${o.offset + 1}–${o.offset + s.items.length}` : 'none past ' + o.offset})`
        : ` (showing ${s.items.length})`;
      out.push(`**${s.class}**: ${s.total}${s.items.length < s.total ? shown : ''}`);
      for (const i of s.items) {
        if (s.class === 'orphans' || s.class === 'untagged') out.push(`- \`${i.key}\``);
        else if (s.class === 'frontmatter_errors') out.push(`- \`${i.key}\` — ${i.detail}`);
        else if (s.class === 'normalization_twins')
          out.push(
            `- \`${i.key}\` is ${i.count} files: ${i.paths.map((p) => `\`${p}\` (${p === p.normalize('NFC') ? 'NFC' : p === p.normalize('NFD') ? 'NFD' : 'mixed'})`).join(', ')}`,
          );
        else
          out.push(
            `- \`${i.key}\` ×${i.count}: ${i.paths.map((p) => `\`${p}\``).join(', ')}${i.paths_total > i.paths.length ? ` … +${i.paths_total - i.paths.length} more notes` : ''}${i.detail ? ` candidates ${i.detail}` : ''}`,
          );
      }
    }
    if (o.next_offset !== undefined) out.push(`more: offset=${o.next_offset} shows the next items of each class`);
    return out.join('\n');
  },
  // Over the result budget each class shows fewer items; next_offset shows the next ones.
  paging: {
    limit: 'limit',
    size: (o) => Math.max(0, ...o.sections.map((s) => s.items.length)),
    next: (input, o) => (o.next_offset === undefined ? undefined : { ...input, offset: o.next_offset }),
  },
});
