// find_related: semantic neighbours of a note through the `embeddings` service (the SDK's EMBEDDINGS contract,
// which the search family provides).
// Read-only; refuses service_unavailable cleanly when no family offers embeddings or it cannot answer now.
import { defineTool, EMBEDDINGS, clampLimit, cursorPaging, offsetPager } from '../../../src/sdk/index.js';
import type { GraphTools } from '../../../src/generated/graph/index.js';
import { clip, findNote, type GraphCtx } from '../common.js';

type Output = GraphTools['find_related']['output'];

type Row = Output['related'][number];

// The answer is the best graph.relatedCap notes; a cursor pages through them by rank.
const pages = offsetPager('find_related');

export default defineTool<GraphTools['find_related']>({
  // Listed only when an embeddings service can answer (the search family with a configured provider).
  available(services) {
    if (!services.hasService(EMBEDDINGS))
      return 'no enabled family provides embeddings (enable the search family and its semantic arm)';
    const state = services.service(EMBEDDINGS).availability();
    return state.ok ? true : state.reason;
  },
  async handler(input, ctx: GraphCtx) {
    if (!ctx.hasService(EMBEDDINGS))
      ctx.refuse('service_unavailable', {
        service: EMBEDDINGS.id,
        reason: 'no enabled family provides embeddings (enable the search family and its semantic arm)',
      });
    const provider = ctx.service(EMBEDDINGS);
    const available = provider.availability();
    if (!available.ok) ctx.refuse('service_unavailable', { service: EMBEDDINGS.id, reason: available.reason });
    const note = await findNote(ctx, input.path);
    const cap = ctx.settings.graph.relatedCap;
    const limit = clampLimit(input.limit, cap, 10);
    const start = pages.start(ctx, input);
    const end = Math.min(start + limit, cap);
    // One more than the page's end (the note itself may be among the hits), and one to know whether more follow.
    const hits = await provider.nearestNotes(ctx.vault.id, { noteId: note.id }, end + 2);
    const seen = new Set<string>([note.path]);
    const ranked: Row[] = [];
    for (const h of hits) {
      if (seen.has(h.path)) continue; // one row per note; the note itself never counts
      seen.add(h.path);
      ranked.push({
        path: h.path,
        title: h.title,
        score: Math.round(h.similarity * 1000) / 1000,
        section: h.sectionOrdinal > 0 ? `#${h.sectionOrdinal} ${h.headingPath}` : null,
        snippet: h.preview ? clip(h.preview, 200) : null,
        stale: h.stale,
      });
    }
    const related = ranked.slice(start, end);
    const more = ranked.length > end && end < cap;
    return {
      path: note.path,
      count: related.length,
      related,
      next_cursor: pages.next(ctx, input, start, related.length, more),
    };
  },
  render(o) {
    if (o.count === 0)
      return `No related notes for \`${o.path}\` (if it was written recently, it may not be embedded yet)`;
    const lines = [
      `${o.count} related notes for \`${o.path}\`:`,
      ...o.related.map(
        (r) =>
          `- **${r.title}** (\`${r.path}\`)${r.section ? ` § ${r.section}` : ''} — sim: ${r.score}${r.stale ? ' — stale' : ''}${r.snippet ? `\n  > ${r.snippet}` : ''}`,
      ),
    ];
    if (o.next_cursor) lines.push(`more: cursor=${o.next_cursor}`);
    return lines.join('\n');
  },
  paging: cursorPaging((o) => o.related.length),
});
