// The keyword ranker's options (search.ranking and the per-call limits) and what it returns: shared by the
// entry point (search.ts), its SQL and memory paths and the page's rows.
import type { FeedbackOptions } from './feedback.js';
import type { KeywordMemory } from './memory-index.js';

export interface RankingOptions extends FeedbackOptions {
  /** Tao & Zhai's α for the proximity bonus of the best notes (0: off). */
  readonly proximity: number;
  readonly k1: number;
  readonly b: number;
  readonly titleWeight: number;
  readonly allTermsFirst: boolean;
  readonly questionWords: boolean;
}

export const DEFAULT_RANKING: RankingOptions = {
  k1: 1.2,
  b: 0.75,
  titleWeight: 3,
  allTermsFirst: false,
  questionWords: true,
  proximity: 0,
  feedbackDocs: 0,
  feedbackTerms: 10,
  feedbackWeight: 0.5,
  feedbackMinTerms: 3,
};

export interface KeywordOptions {
  readonly configs: readonly string[];
  readonly limit: number;
  readonly candidates: number;
  readonly snippetRows: number;
  readonly snippetChars: number;
  readonly snippetScanChars: number;
  /** Fill a short page with partial (any-term) matches. */
  readonly fill: boolean;
  readonly ranking?: RankingOptions;
  /** Candidates whose vectors are read for term frequencies (at least `limit`). */
  readonly rescore?: number;
  /** The in-memory scoring index; without it (or while it loads) every query takes the SQL path. */
  readonly memory?: KeywordMemory;
}

export const DEFAULT_RESCORE = 60;

export interface KeywordHit {
  readonly noteId: number;
  readonly path: string;
  readonly title: string;
  readonly score: number;
  readonly match: 'all' | 'any';
  readonly exactTitle: boolean;
  readonly matchedIn: Array<'title' | 'body'>;
  readonly termsMatched: number;
  readonly termsTotal: number;
  readonly snippet: string | null;
  readonly head: string;
  /** Which units matched where and what each weighed: `redis t+b 3.10 · cach b 1.25`. */
  readonly explain: string;
}

export interface KeywordResult {
  readonly hits: KeywordHit[];
  /** Units of evidence after stop words and question scaffolding dropped out. */
  readonly termsTotal: number;
  /** True when a candidate source hit the cap, so ranking saw a bounded subset of the matches. */
  readonly capped: boolean;
  readonly allCount: number;
  /** Words the query planner dropped as carrying no evidence. */
  readonly dropped: string[];
}
