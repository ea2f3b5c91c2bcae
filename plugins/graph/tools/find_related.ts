// find_related: semantic neighbours of a note through the `embeddings` service (the SDK's EMBEDDINGS contract,
// which the search family provides).
// Read-only; refuses service_unavailable cleanly when no family offers embeddings or it cannot answer now.
import { defineTool, EMBEDDINGS } from '../../../src/sdk/index.js';
import type { GraphTools } from '../../../src/generated/graph/index.js';
import { clip, findNote, type GraphCtx } from '../common.js';
import { clampLimit } from '../../../src/sdk/query/index.js';

type Output = GraphTools['find_related']['output'];

type Row = Output['related'][number];

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
    const limit = clampLimit(input.limit, ctx.settings.graph.relatedCap, 10);
    const hits = await provider.nearestNotes(ctx.vault.id, { noteId: note.id }, limit + 1);
    const seen = new Set<string>([note.path]);
    const related: Row[] = [];
    for (const h of hits) {
      if (seen.has(h.path)) continue; // one row per note; the note itself never counts
      seen.add(h.path);
      related.push({
        path: h.path,
        title: h.title,
        score: Math.round(h.similarity * 1000) / 1000,
        section: h.sectionOrdinal > 0 ? `#${h.sectionOrdinal} ${h.headingPath}` : null,
        snippet: h.preview ? clip(h.preview, 200) : null,
        stale: h.stale,
      });
      if (related.length >= limit) break;
    }
    return { path: note.path, count: related.length, related };
  },
  render(o) {
    if (o.count === 0)
      return `No related notes for \`${o.path}\` (if it was written recently, it may not be embedded yet)`;
    return [
      `Top ${o.count} related notes for \`${o.path}\`:`,
      ...o.related.map(
        (r) =>
          `- **${r.title}** (\`${r.path}\`)${r.section ? ` § ${r.section}` : ''} — sim: ${r.score}${r.stale ? ' — stale' : ''}${r.snippet ? `\n  > ${r.snippet}` : ''}`,
      ),
    ].join('\n');
  },
});
