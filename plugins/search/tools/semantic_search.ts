// semantic_search: notes by meaning, one row per note (its best chunk), with a section locator and
// preview; stale rows keep their rank without a preview. Optional rerank of the fetched candidates.
import {
  defineTool,
  EMBEDDINGS,
  type ToolContext,
  clampLimit,
  cursorPaging,
  offsetPager,
} from '../../../src/sdk/index.js';
import { describeFilters } from '../filters.js';
import { confidenceOf } from '../ranking/rrf.js';
import { orderByScores, rerank } from '../ranking/rerank.js';
import type { SearchSettingsSection } from '../settings.js';
import { indexSettled } from '../settled.js';
import { fixed, quote, withDeepLink } from '../render-util.js';
import { sectionLocator, semanticArm } from '../semantic-arm.js';
import type { SearchTools } from '../../../src/generated/search/index.js';

type SemanticSearchInput = SearchTools['semantic_search']['input'];
type SemanticSearchOutput = SearchTools['semantic_search']['output'];
type SemanticRow = SemanticSearchOutput['rows'][number];

// A search's answer is its best search.maxLimit hits; a cursor pages through them.
const pages = offsetPager('semantic_search');

export default defineTool<SearchTools['semantic_search']>({
  // Without a working embedding provider this tool could only answer "unavailable": it is not listed then
  // (hybrid_search stays, ranking by keywords alone).
  available(services) {
    if (!services.hasService(EMBEDDINGS)) return 'no embedding provider is configured';
    const state = services.service(EMBEDDINGS).availability();
    return state.ok ? true : state.reason;
  },
  async handler(input: SemanticSearchInput, ctx: ToolContext<SearchSettingsSection>): Promise<SemanticSearchOutput> {
    const s = ctx.settings.search;
    await indexSettled(ctx); // its counts read the embedding queue, which the keyword rows' statement fills
    const asked = input.limit ?? 15;
    const limit = clampLimit(asked, s.maxLimit);
    const start = pages.start(ctx, input);
    const end = Math.min(start + limit, s.maxLimit);
    const fetch = input.rerank ? Math.max(end + 1, s.armDepth) : Math.min(end + 1, s.maxLimit);
    const arm = await semanticArm(ctx, input.query, input, fetch);
    const base = { query: input.query, filters: describeFilters(input), cut: asked > limit };
    const counts = {
      notes_embedded: arm.counts.embedded,
      notes_queued: arm.counts.queued,
      notes_stale: arm.counts.stale,
    };
    if (!arm.ok) {
      return {
        ...base,
        ...counts,
        semantic: `unavailable: ${arm.reason}`,
        confidence: 'low',
        reranked: input.rerank ? 'false (semantic unavailable)' : 'false (not requested)',
        count: 0,
        rows: [],
        next_cursor: null,
      };
    }
    let rows = arm.rows;
    let reranked = 'false (not requested)';
    let rerankScores: number[] | undefined;
    if (input.rerank) {
      const out = await rerank(
        s.rerank,
        input.query,
        rows.map((r) => `${r.title}\n${r.preview ?? ''}`),
        ctx.signal,
      );
      if (out.ok) {
        const order = orderByScores(out.scores);
        rerankScores = order.map((i) => out.scores[i]);
        rows = order.map((i) => rows[i]);
        reranked = `true (candidates: ${out.scores.length})`;
      } else reranked = `false (${out.reason})`;
    }
    const page = rows.slice(start, end).map(
      (r, i): SemanticRow => ({
        rank: start + i + 1,
        path: r.path,
        title: r.title,
        similarity: Math.round(r.similarity * 10000) / 10000,
        section: sectionLocator(r),
        preview: r.preview,
        stale: r.stale,
        embedding_truncated: r.truncated,
        ...(rerankScores ? { rerank_score: Math.round(rerankScores[start + i] * 10000) / 10000 } : {}),
        ...withDeepLink(ctx, r.path),
      }),
    );
    const best = arm.rows[0]?.similarity;
    return {
      ...base,
      ...counts,
      semantic: 'ok',
      confidence: confidenceOf(s.lowConfidenceSimilarity, best, 0),
      reranked,
      count: page.length,
      rows: page,
      next_cursor: pages.next(ctx, input, start, page.length, rows.length > end),
    };
  },
  render(o: SemanticSearchOutput): string {
    const lines = [
      `semantic_search ${quote(o.query)}${o.filters ? ` ${o.filters}` : ''} — ${o.count} rows · semantic: ${o.semantic} · confidence: ${o.confidence} · reranked: ${o.reranked}`,
      `notes: ${o.notes_embedded} embedded, ${o.notes_queued} queued, ${o.notes_stale} stale`,
    ];
    if (o.confidence === 'low' && o.semantic === 'ok')
      lines.push('hint: weak matches — try keyword_search or get_neighborhood');
    if (o.cut) lines.push('note: limit cut to the server maximum');
    for (const r of o.rows) {
      const flags = [
        r.stale ? 'stale: changed since embedded, preview withheld' : '',
        r.embedding_truncated ? 'embedding_truncated' : '',
      ]
        .filter(Boolean)
        .join(' · ');
      lines.push(
        `${r.rank}. ${r.path} — ${quote(r.title)} [sim ${fixed(r.similarity, 3)}${r.rerank_score !== undefined ? ` · rerank ${fixed(r.rerank_score, 3)}` : ''}]${r.section ? ` ${r.section}` : ''}${flags ? ` (${flags})` : ''}`,
      );
      if (r.preview) lines.push(`   ${r.preview}`);
      if (r.deep_link) lines.push(`   open: ${r.deep_link}`);
    }
    if (o.next_cursor) lines.push(`more: cursor=${o.next_cursor}`);
    return lines.join('\n');
  },
  paging: cursorPaging((o: SemanticSearchOutput) => o.rows.length),
});
