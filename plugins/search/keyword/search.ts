// Keyword search over search_keyword, ranked BM25F in three bounded steps: (1) the query becomes units of evidence
// (stop words and question scaffolding dropped, CJK words as bigrams) and each lexeme's document frequency is
// estimated from a 1-in-32 sample index; (2) the rarest lexemes, up to `candidates` postings, are read from the
// GIN index without touching the vectors, each note scored by the IDF of the rare lexemes it holds, and only the
// best `rescore` of those (plus title, all-terms, phrase and exact-title hits) have their vectors read for term
// frequencies, title hits counted `titleWeight` times; (3) the page's rows get their paths and snippets.
// Exact title/alias matches rank first, then whole-query phrases. No step's cost grows with the vault's size
// beyond the postings it is allowed to read.
// The memory path is memory-path.ts, the SQL path sql-path.ts, the page's rows and snippets page.ts.
import type { Database } from '../../../src/sdk/index.js';
import type { SearchFilters } from '../filters.js';
import { memorySearch } from './memory-path.js';
import { DEFAULT_RANKING, type KeywordOptions, type KeywordResult } from './options.js';
import { parseQuery, planQuery } from './query-parse.js';
import { sqlSearch } from './sql-path.js';

export {
  DEFAULT_RANKING,
  DEFAULT_RESCORE,
  type KeywordHit,
  type KeywordOptions,
  type KeywordResult,
  type RankingOptions,
} from './options.js';

export async function keywordSearch(
  db: Database,
  vaultId: number,
  query: string,
  filters: SearchFilters,
  o: KeywordOptions,
): Promise<KeywordResult> {
  const ranking = o.ranking ?? DEFAULT_RANKING;
  const parsed = parseQuery(query);
  const plan = planQuery(parsed, query, ranking.questionWords);
  const termsTotal = plan.units.length;
  const empty = { hits: [], termsTotal, capped: false, allCount: 0, dropped: plan.dropped };
  if (!plan.units.length) return empty;
  if (o.memory && !plan.negated.length) {
    const viaMemory = await memorySearch(db, vaultId, query, parsed, plan, filters, o, ranking, o.memory);
    if (viaMemory) return viaMemory;
  }
  return sqlSearch(db, vaultId, query, parsed, plan, filters, o, ranking);
}
