// hybrid_search: reciprocal rank fusion of the keyword and semantic arms (each arm's top
// search.armDepth). Without a working semantic arm it returns the keyword ranking, marked so on
// every return path. Optional rerank of the fused candidates.
import { defineTool, type ToolContext, cursorPaging, offsetPager } from '../../../src/sdk/index.js';
import { describeFilters } from '../filters.js';
import { confidenceOf, reciprocalRankFusion } from '../ranking/rrf.js';
import { orderByScores, rerank } from '../ranking/rerank.js';
import type { SearchSettingsSection } from '../settings.js';
import { runKeywordSearch } from './keyword_search.js';
import { fixed, quote, withDeepLink } from '../render-util.js';
import { sectionLocator, semanticArm } from '../semantic-arm.js';
import type { SearchTools } from '../../../src/generated/search/index.js';

type HybridSearchInput = SearchTools['hybrid_search']['input'];
type HybridSearchOutput = SearchTools['hybrid_search']['output'];
type HybridRow = HybridSearchOutput['rows'][number];

interface Candidate {
  path: string;
  title: string;
  keywordRank: number | null;
  semanticRank: number | null;
  score: number;
  kTerm: number;
  sTerm: number;
  section?: string | null;
  text: string;
  exact: boolean;
}

/** The fused candidates (all of them, before the page cut) and the page header fields. */
export async function hybridCandidates(input: HybridSearchInput, ctx: ToolContext<SearchSettingsSection>) {
  const s = ctx.settings.search;
  const keyword = await runKeywordSearch(input, ctx, s.armDepth);
  const semantic = await semanticArm(ctx, input.query, input, s.armDepth);
  const kById = new Map(keyword.hits.map((h) => [h.noteId, h]));
  const sById = new Map(semantic.ok ? semantic.rows.map((r) => [r.noteId, r]) : []);
  const fused = reciprocalRankFusion(
    {
      keyword: keyword.hits.map((h) => h.noteId),
      ...(semantic.ok ? { semantic: semantic.rows.map((r) => r.noteId) } : {}),
    },
    s.rrfK,
  );
  const candidates: Candidate[] = fused.map((f) => {
    const k = kById.get(f.id);
    const v = sById.get(f.id);
    return {
      path: (k?.path ?? v?.path) as string,
      title: (k?.title ?? v?.title) as string,
      keywordRank: f.ranks.keyword ?? null,
      semanticRank: f.ranks.semantic ?? null,
      score: f.score,
      kTerm: f.terms.keyword ?? 0,
      sTerm: f.terms.semantic ?? 0,
      ...(v ? { section: sectionLocator(v) } : {}),
      text: k?.snippet ?? v?.preview ?? k?.head ?? '',
      exact: k?.exactTitle ?? false,
    };
  });
  // A query that is exactly a note's title or alias ranks that note first, as in keyword_search (stable sort).
  candidates.sort((a, b) => Number(b.exact) - Number(a.exact));
  const arms = semantic.ok ? 'keyword+semantic' : `keyword-only (semantic unavailable: ${semantic.reason})`;
  const best = semantic.ok ? semantic.rows[0]?.similarity : undefined;
  const confidence = semantic.ok
    ? confidenceOf(s.lowConfidenceSimilarity, best, keyword.allCount)
    : confidenceOf(s.lowConfidenceSimilarity, undefined, keyword.allCount);
  return { candidates, arms, confidence };
}

// A search's answer is its best search.maxLimit hits; a cursor pages through them.
const pages = offsetPager('hybrid_search');

export default defineTool<SearchTools['hybrid_search']>({
  async handler(input: HybridSearchInput, ctx: ToolContext<SearchSettingsSection>): Promise<HybridSearchOutput> {
    const s = ctx.settings.search;
    const asked = input.limit ?? 10;
    const limit = Math.min(asked, s.maxLimit);
    const start = pages.start(ctx, input);
    const end = Math.min(start + limit, s.maxLimit);
    const { candidates, arms, confidence } = await hybridCandidates(input, ctx);
    let ordered = candidates;
    let reranked = 'false (not requested)';
    let scores: number[] | undefined;
    if (input.rerank) {
      const pool = candidates.slice(0, s.armDepth);
      const out = await rerank(
        s.rerank,
        input.query,
        pool.map((c) => `${c.title}\n${c.text}`),
        ctx.signal,
      );
      if (out.ok) {
        const order = orderByScores(out.scores);
        ordered = order.map((i) => pool[i]);
        scores = order.map((i) => out.scores[i]);
        reranked = `true (candidates: ${pool.length})`;
      } else reranked = `false (${out.reason})`;
    }
    const rows = ordered.slice(start, end).map(
      (c, i): HybridRow => ({
        rank: start + i + 1,
        path: c.path,
        title: c.title,
        score: Math.round(c.score * 1e6) / 1e6,
        keyword_rank: c.keywordRank,
        semantic_rank: c.semanticRank,
        keyword_term: Math.round(c.kTerm * 1e6) / 1e6,
        semantic_term: Math.round(c.sTerm * 1e6) / 1e6,
        ...(c.section !== undefined ? { section: c.section } : {}),
        ...(c.text ? { text: c.text } : {}),
        ...(scores ? { rerank_score: Math.round(scores[start + i] * 1e4) / 1e4 } : {}),
        ...(c.exact ? { exact_title: true } : {}),
        ...withDeepLink(ctx, c.path),
      }),
    );
    return {
      query: input.query,
      filters: describeFilters(input),
      arms,
      rrf_k: s.rrfK,
      confidence,
      reranked,
      count: rows.length,
      cut: asked > limit,
      rows,
      next_cursor: pages.next(ctx, input, start, rows.length, ordered.length > end),
    };
  },
  render(o: HybridSearchOutput): string {
    const lines = [
      `hybrid_search ${quote(o.query)}${o.filters ? ` ${o.filters}` : ''} — ${o.count} rows · arms: ${o.arms} · rrf k=${o.rrf_k} · confidence: ${o.confidence} · reranked: ${o.reranked}`,
    ];
    if (o.confidence === 'low') lines.push('hint: weak matches — try keyword_search or get_neighborhood');
    if (o.cut) lines.push('note: limit cut to the server maximum');
    for (const r of o.rows) {
      const parts = [
        `fused ${fixed(r.score, 5)}`,
        `kw ${r.keyword_rank ?? '-'} (${fixed(r.keyword_term, 5)})`,
        `sem ${r.semantic_rank ?? '-'} (${fixed(r.semantic_term, 5)})`,
      ];
      if (r.rerank_score !== undefined) parts.push(`rerank ${fixed(r.rerank_score, 3)}`);
      if (r.exact_title) parts.push('exact title');
      lines.push(`${r.rank}. ${r.path} — ${quote(r.title)} [${parts.join(' · ')}]${r.section ? ` ${r.section}` : ''}`);
      if (r.text) lines.push(`   ${r.text}`);
      if (r.deep_link) lines.push(`   open: ${r.deep_link}`);
    }
    if (o.next_cursor) lines.push(`more: cursor=${o.next_cursor}`);
    return lines.join('\n');
  },
  // Over the result budget a page holds fewer rows; next_cursor continues with the next ranks.
  paging: cursorPaging((o: HybridSearchOutput) => o.rows.length),
});
