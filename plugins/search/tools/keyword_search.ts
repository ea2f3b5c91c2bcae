// keyword_search: full text over the keyword vectors, AND first then partial fill, with snippets.
// Bounded output: `limit` ≤ search.maxLimit rows, snippets ≤ search.snippetChars.
import { defineTool, type ToolContext, cursorPaging, offsetPager } from '../../../src/sdk/index.js';
import { describeFilters } from '../filters.js';
import { keywordSearch } from '../keyword/search.js';
import type { SearchSettingsSection } from '../settings.js';
import { indexSettled } from '../settled.js';
import { quote, withDeepLink } from '../render-util.js';
import type { SearchTools } from '../../../src/generated/search/index.js';
import type { KeywordIndexService } from '../family.js';

type KeywordSearchInput = SearchTools['keyword_search']['input'];
type KeywordSearchOutput = SearchTools['keyword_search']['output'];
type KeywordRow = KeywordSearchOutput['rows'][number];

export async function runKeywordSearch(
  input: KeywordSearchInput,
  ctx: ToolContext<SearchSettingsSection>,
  limit: number,
  fill = true,
) {
  const s = ctx.settings.search;
  await indexSettled(ctx);
  return keywordSearch(ctx.db, ctx.vault.id, input.query, input, {
    configs: s.ftsConfigs,
    limit,
    candidates: s.keywordCandidates,
    rescore: s.keywordRescore,
    snippetRows: s.snippetRows,
    snippetChars: s.snippetChars,
    snippetScanChars: s.snippetScanChars,
    fill,
    ranking: s.ranking,
    ...(ctx.hasService('search-keyword') ? { memory: ctx.service<KeywordIndexService>('search-keyword').memory } : {}),
  });
}

// A search's answer is its best search.maxLimit hits; a cursor pages through them.
const pages = offsetPager('keyword_search');

export default defineTool<SearchTools['keyword_search']>({
  async handler(input: KeywordSearchInput, ctx: ToolContext<SearchSettingsSection>): Promise<KeywordSearchOutput> {
    const s = ctx.settings.search;
    const asked = input.limit ?? 20;
    const limit = Math.min(asked, s.maxLimit);
    const start = pages.start(ctx, input);
    const end = Math.min(start + limit, s.maxLimit);
    const result = await runKeywordSearch(input, ctx, Math.min(end + 1, s.maxLimit));
    const rows: KeywordRow[] = result.hits.slice(start, end).map((h, i) => ({
      rank: start + i + 1,
      path: h.path,
      title: h.title,
      score: Math.round(h.score * 10000) / 10000,
      match: h.match,
      matched_in: h.matchedIn,
      terms: `${h.termsMatched}/${h.termsTotal}`,
      ...(h.snippet ? { snippet: h.snippet } : { head: h.head }),
      ...(h.explain ? { why: h.explain } : {}),
      ...withDeepLink(ctx, h.path),
    }));
    return {
      query: input.query,
      filters: describeFilters(input),
      configs: [...s.ftsConfigs],
      count: rows.length,
      full_matches: result.allCount,
      terms_total: result.termsTotal,
      ...(result.dropped.length ? { ignored_words: result.dropped } : {}),
      candidates_capped: result.capped,
      cut: asked > limit,
      rows,
      next_cursor: pages.next(ctx, input, start, rows.length, result.hits.length > end),
    };
  },
  render(o: KeywordSearchOutput): string {
    const lines = [
      `keyword_search ${quote(o.query)}${o.filters ? ` ${o.filters}` : ''} — ${o.count} rows (${o.full_matches} all terms, ${o.count - o.full_matches} partial) · configs: ${o.configs.join(',')}`,
    ];
    if (o.ignored_words?.length) lines.push(`ignored (no evidence): ${o.ignored_words.join(' ')}`);
    if (o.candidates_capped)
      lines.push('note: broad query — ranked a bounded candidate set of the matches; add terms or filters to narrow');
    if (o.cut) lines.push('note: limit cut to the server maximum');
    if (!o.rows.length) lines.push('no matches');
    for (const r of o.rows) {
      lines.push(
        `${r.rank}. ${r.path} — ${quote(r.title)} [match: ${r.match} · in: ${r.matched_in.join('+') || '-'} · terms ${r.terms} · ${r.score}]`,
      );
      lines.push(r.snippet !== undefined ? `   snippet: ${r.snippet}` : `   head: ${r.head ?? ''}`);
      if (r.why) lines.push(`   why: ${r.why}`);
      if (r.deep_link) lines.push(`   open: ${r.deep_link}`);
    }
    if (o.next_cursor) lines.push(`more: cursor=${o.next_cursor}`);
    return lines.join('\n');
  },
  // Over the result budget a page holds fewer rows; next_cursor continues with the next ranks.
  paging: cursorPaging((o: KeywordSearchOutput) => o.rows.length),
});
