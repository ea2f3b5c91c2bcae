// Keyword search over search_keyword, ranked BM25F: the query becomes units of evidence (stop words and question
// scaffolding dropped, CJK words as bigrams), candidates come from the rare lexemes, the all-terms match, title
// and exact-title hits (each bounded by `candidates`), and every candidate is scored by IDF-weighted, saturated,
// length-normalised term frequencies with title hits counted `titleWeight` times. Exact title/alias matches rank
// first. Details (terms k/n, where matched, snippets, the explanation) are computed for page rows only.
import { sql, type RawBuilder } from 'kysely';
import type { Database } from '../../../src/sdk/index.js';
import { filterSql, hasFilters, type SearchFilters } from '../filters.js';
import { cjkSnippet, shapeSnippet } from '../ranking/snippet.js';
import { idf, unitScores, type UnitLexemes, type VaultStats } from './bm25.js';
import { cjkPhraseText, cjkPrefixQuery, hasCjk, isSingleCjk } from './cjk.js';
import { parseQuery, planQuery, planText, type QueryPlan } from './query-parse.js';

export interface RankingOptions {
  readonly k1: number;
  readonly b: number;
  readonly titleWeight: number;
  readonly allTermsFirst: boolean;
  readonly questionWords: boolean;
}

export const DEFAULT_RANKING: RankingOptions = { k1: 1.2, b: 0.75, titleWeight: 3, allTermsFirst: false, questionWords: true };

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
}

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

interface Compiled {
  q_all: string;
  q_pos: string;
  q_any: string;
  units: string[];
  lex: Array<[number, number, string, number]> | null;
  docs: number | string | null;
  total_len: number | string | null;
}

function tsq(configs: readonly string[], text: string): RawBuilder<unknown> {
  return sql.join(configs.map((c) => sql`websearch_to_tsquery(${c}::regconfig, ${text})`), sql` || `);
}

/** One round trip: the tsqueries, each unit's lexemes per config with their document frequencies (counted now), the vault's totals. */
async function compile(db: Database, vaultId: number, configs: readonly string[], plan: QueryPlan): Promise<Compiled> {
  const allText = planText(plan);
  const anyText = plan.units.map((u) => u.text).join(' OR ');
  const neg = plan.negated.join(' OR ');
  const unitCols = plan.units.map((u) => sql`(${tsq(configs, u.text)})::text`);
  const singleCjk = [...new Set(plan.units.flatMap((u) => [...u.text]).filter(isSingleCjk))];
  const r = await sql<Compiled>`
    WITH base AS (SELECT ${allText ? tsq(configs, allText) : sql`''::tsquery`} AS q_all, ${anyText ? tsq(configs, anyText) : sql`''::tsquery`} AS q_pos,
                         ${neg ? tsq(configs, neg) : sql`''::tsquery`} AS q_neg),
    lx AS (
      SELECT u.ord, c.cord, l.lexeme
      FROM unnest(${plan.units.map((u) => u.text)}::text[]) WITH ORDINALITY AS u(txt, ord)
      CROSS JOIN unnest(${`{${configs.join(',')}}`}::regconfig[]) WITH ORDINALITY AS c(cfg, cord)
      CROSS JOIN LATERAL unnest(tsvector_to_array(to_tsvector(c.cfg, u.txt))) AS l(lexeme)
    )
    SELECT q_all::text AS q_all, q_pos::text AS q_pos,
           (CASE WHEN numnode(q_neg) = 0 THEN q_pos ELSE q_pos && !! q_neg END)::text AS q_any,
           ARRAY[${unitCols.length ? sql.join(unitCols) : sql`NULL::text`}]::text[] AS units,
           -- Document frequencies are counted here, for the query's lexemes only, from the GIN index (a bitmap
           -- of one lexeme needs no recheck, so no vector is read): the write path keeps no per-term rows.
           (SELECT json_agg(json_build_array(d.ord - 1, d.cord - 1, d.lexeme,
                     (SELECT count(*)::int FROM search_keyword k WHERE k.vault_id = ${vaultId}
                        AND k.tsv @@ (quote_literal(d.lexeme) || CASE WHEN d.lexeme = ANY(${singleCjk}::text[]) THEN ':*' ELSE '' END)::tsquery)))
              FROM lx d) AS lex,
           s.docs, s.total_len
    FROM base LEFT JOIN search_keyword_stats s ON s.vault_id = ${vaultId}`.execute(db);
  // The index holds a lone CJK character only where its run ends: as a query word it is a prefix of bigrams.
  const c = r.rows[0];
  return { ...c, q_all: cjkPrefixQuery(c.q_all), q_pos: cjkPrefixQuery(c.q_pos), q_any: cjkPrefixQuery(c.q_any), units: c.units.map((u) => u && cjkPrefixQuery(u)) };
}

/** A tsquery matching any one of these lexemes. */
function anyLexeme(lexemes: readonly string[]): string {
  return lexemes.map((l) => `'${l.replace(/'/g, "''")}'${isSingleCjk(l) ? ':*' : ''}`).join(' | ');
}

interface Scored {
  id: number;
  exact: boolean;
  phrase: boolean;
  score: number;
  unitScores: number[];
  hits: boolean[];
  match: 'all' | 'any';
}

export async function keywordSearch(db: Database, vaultId: number, query: string, filters: SearchFilters, o: KeywordOptions): Promise<KeywordResult> {
  const ranking = o.ranking ?? DEFAULT_RANKING;
  const parsed = parseQuery(query);
  const plan = planQuery(parsed, query, ranking.questionWords);
  const termsTotal = plan.units.length;
  const empty = { hits: [], termsTotal, capped: false, allCount: 0, dropped: plan.dropped };
  if (!plan.units.length) return empty;
  const c = await compile(db, vaultId, o.configs, plan);
  if (!c.q_any) return empty;

  // Lexemes: one slot each; units keep, per config, the slots their text became.
  const slots = new Map<string, { i: number; df: number }>();
  const units: Array<{ perConfig: number[][] }> = plan.units.map(() => ({ perConfig: o.configs.map(() => []) }));
  for (const [u, cfg, lexeme, df] of c.lex ?? []) {
    let slot = slots.get(lexeme);
    if (!slot) slots.set(lexeme, (slot = { i: slots.size, df: Number(df) }));
    units[u]?.perConfig[cfg]?.push(slot.i);
  }
  const lexemes = [...slots.keys()];
  if (!lexemes.length) return empty;
  const stats: VaultStats = { docs: Number(c.docs ?? 0), avgLength: Number(c.docs) > 0 ? Number(c.total_len ?? 0) / Number(c.docs) : 0 };
  const weights = lexemes.map((l) => idf(slots.get(l)!.df, stats.docs));

  // Candidates: every note holding one of the rarest lexemes, as long as their document frequencies add up
  // to at most `candidates`; the common ones only score what the rare ones (and titles, and the all-terms
  // match) brought in. When every lexeme is common, the rarest one's first `candidates` notes stand in.
  const byDf = [...lexemes].sort((a, b) => slots.get(a)!.df - slots.get(b)!.df);
  const generating: string[] = [];
  let budget = o.candidates;
  for (const l of byDf) {
    const df = slots.get(l)!.df;
    if (df > budget) break;
    generating.push(l);
    budget -= df;
  }
  let capped = false;
  if (!generating.length) {
    generating.push(byDf[0]);
    capped = true;
  }
  const f = filterSql(filters);
  const join = hasFilters(filters) ? sql`JOIN notes n ON n.id = k.note_id` : sql``;
  const cap = o.candidates;
  // All-terms and title hits only add candidates the rare lexemes missed; a quarter of the budget each keeps
  // the scored set (one detoasted vector per note) near `candidates`.
  const sideCap = Math.max(10, Math.floor(cap / 4));
  const multi = plan.units.length > 1 && !plan.hasOr;
  const bodyCheck = c.q_any.includes('!') ? sql` AND k.tsv @@ ${c.q_any}::tsquery` : sql``;
  const w = 1 / Math.max(1, ranking.titleWeight);
  const tfCols = sql.join(lexemes.map((l) => sql`ts_rank_cd(${`{${w},${w},${w},1}`}::real[], c.v, ${anyLexeme([l])}::tsquery, 0)`));
  const hitCols = sql.join(c.units.map((u) => (u ? sql`(c.v @@ ${u}::tsquery)` : sql`false`)));
  // A note holding the whole query as a phrase ranks next after exact titles: that is what a pasted sentence asks for.
  const phraseable = plan.units.length > 1 && !plan.hasOr && !plan.negated.length && !parsed.units.some((u) => u.startsWith('"'));
  const phraseCheck = phraseable
    ? sql`(${sql.join(o.configs.map((cfg) => sql`c.v @@ phraseto_tsquery(${cfg}::regconfig, ${cjkPhraseText(query)})`), sql` OR `)})`
    : sql`false`;
  const r = await sql<{ note_id: string; exact: boolean; phrase: boolean; body_len: number; tf: number[]; hits: boolean[]; gen_n: number; all_n: number; title_n: number }>`
    WITH gen AS (
      SELECT k.note_id FROM search_keyword k ${join}
      WHERE k.vault_id = ${vaultId} AND k.tsv @@ ${anyLexeme(generating)}::tsquery ${f} LIMIT ${cap}
    ), all_hits AS (
      SELECT k.note_id FROM search_keyword k ${join}
      WHERE ${multi && c.q_all ? sql`k.vault_id = ${vaultId} AND k.tsv @@ ${c.q_all}::tsquery ${f}` : sql`false`} LIMIT ${sideCap}
    ), title_hits AS (
      SELECT k.note_id FROM search_keyword k ${join}
      WHERE k.vault_id = ${vaultId} AND k.title_tsv @@ ${c.q_pos}::tsquery ${bodyCheck} ${f} LIMIT ${sideCap}
    ), exact_hits AS (
      SELECT k.note_id FROM search_keyword k ${join}
      WHERE k.vault_id = ${vaultId} AND k.title_keys @> ARRAY[${plan.exact}]::text[] ${f} LIMIT 20
    ), cand AS (
      SELECT note_id FROM gen UNION SELECT note_id FROM all_hits UNION SELECT note_id FROM title_hits UNION SELECT note_id FROM exact_hits
    ), c AS MATERIALIZED (
      -- Concatenating an empty vector hands back a detoasted copy: every ts_rank_cd below reads it without
      -- decompressing the stored vector again (measured: one detoast per call dominated the scoring).
      SELECT k.note_id, (k.title_keys @> ARRAY[${plan.exact}]::text[]) AS exact, k.body_len, k.tsv || ''::tsvector AS v
      FROM cand JOIN search_keyword k ON k.note_id = cand.note_id
    )
    SELECT c.note_id, c.exact, ${phraseCheck} AS phrase, c.body_len, ARRAY[${tfCols}]::real[] AS tf, ARRAY[${hitCols}]::boolean[] AS hits,
           (SELECT count(*)::int FROM gen) AS gen_n, (SELECT count(*)::int FROM all_hits) AS all_n, (SELECT count(*)::int FROM title_hits) AS title_n
    FROM c WHERE c.v @@ ${c.q_any}::tsquery OR c.exact`.execute(db);
  const first = r.rows[0];
  if (first) capped ||= (generating.length === 1 && capped) || first.gen_n >= cap || first.all_n >= sideCap || first.title_n >= sideCap;

  const scored: Scored[] = r.rows.map((row) => {
    const tf = row.tf.map((x) => Number(x) * Math.max(1, ranking.titleWeight));
    const per = unitScores(units as UnitLexemes[], weights, tf, Number(row.body_len), stats, ranking);
    const hits = row.hits.map((h) => h === true);
    const matched = hits.filter(Boolean).length;
    return { id: Number(row.note_id), exact: row.exact, phrase: row.phrase === true, score: per.reduce((a, b) => a + b, 0), unitScores: per, hits, match: matched === plan.units.length ? 'all' : 'any' };
  });
  let pool = scored;
  if (!o.fill || plan.units.length < 2 || plan.hasOr) pool = scored.filter((s) => s.match === 'all' || s.exact || plan.hasOr);
  pool.sort(
    (a, b) =>
      Number(b.exact) - Number(a.exact) ||
      Number(b.phrase) - Number(a.phrase) ||
      (ranking.allTermsFirst ? Number(b.match === 'all') - Number(a.match === 'all') : 0) ||
      b.score - a.score ||
      a.id - b.id,
  );
  const ranked = pool.slice(0, o.limit);
  if (!ranked.length) return { ...empty, capped };

  const ids = ranked.map((x) => x.id);
  const snipIds = ids.slice(0, o.snippetRows);
  const cjk = hasCjk(query);
  const titleUnitCols = c.units.length ? sql.join(c.units.map((u) => (u ? sql`(k.title_tsv @@ ${u}::tsquery)` : sql`false`))) : sql`NULL::boolean`;
  const bodyUnitCols = c.units.length ? sql.join(c.units.map((u) => (u ? sql`(b.bv @@ ${u}::tsquery)` : sql`false`))) : sql`NULL::boolean`;
  const details = await sql<{ note_id: string; path: string; title: string; head: string; in_title: boolean; in_body: boolean; unit_titles: boolean[] | null; unit_bodies: boolean[] | null; headline: string | null; scan: string | null }>`
    SELECT k.note_id, n.path, n.title, k.head,
           (k.title_tsv @@ ${c.q_pos}::tsquery) AS in_title,
           (b.bv @@ ${c.q_pos}::tsquery) AS in_body,
           ARRAY[${titleUnitCols}] AS unit_titles, ARRAY[${bodyUnitCols}] AS unit_bodies,
           CASE WHEN k.note_id = ANY(${snipIds}::bigint[])
                THEN ts_headline(${o.configs[0]}::regconfig, left(k.body, ${o.snippetScanChars}), ${c.q_pos}::tsquery,
                     'StartSel=«, StopSel=», MaxWords=24, MinWords=8, MaxFragments=2, FragmentDelimiter=" … "')
           END AS headline,
           CASE WHEN ${cjk} AND k.note_id = ANY(${snipIds}::bigint[]) THEN left(k.body, ${o.snippetScanChars}) END AS scan
    FROM search_keyword k JOIN notes n ON n.id = k.note_id CROSS JOIN LATERAL (SELECT ts_filter(k.tsv, '{d}') AS bv) b
    WHERE k.note_id = ANY(${ids}::bigint[])`.execute(db);
  const byId = new Map(details.rows.map((d) => [Number(d.note_id), d]));
  const hits: KeywordHit[] = [];
  for (const s of ranked) {
    const d = byId.get(s.id);
    if (!d) continue;
    const matchedIn: Array<'title' | 'body'> = [];
    if (d.in_title || s.exact) matchedIn.push('title');
    if (d.in_body) matchedIn.push('body');
    const onlyTitle = matchedIn.length === 1 && matchedIn[0] === 'title';
    let snippet = onlyTitle ? null : shapeSnippet(d.headline, o.snippetChars);
    if (!onlyTitle && cjk && d.scan && (!snippet || !snippet.includes('«'))) snippet = cjkSnippet(d.scan, plan.units.map((u) => u.shown), o.snippetChars) ?? snippet;
    hits.push({
      noteId: s.id,
      path: d.path,
      title: d.title,
      score: s.exact ? 1 + s.score : s.score,
      match: s.match,
      exactTitle: s.exact,
      matchedIn,
      termsMatched: s.hits.filter(Boolean).length,
      termsTotal,
      snippet,
      head: d.head,
      explain: explainRow(plan, s, d.unit_titles ?? [], d.unit_bodies ?? []),
    });
  }
  return { hits, termsTotal, capped, allCount: hits.filter((h) => h.match === 'all').length, dropped: plan.dropped };
}

/** The matched units, heaviest first: `shown where weight`, where is t (title), b (body) or t+b. At most six. */
function explainRow(plan: QueryPlan, s: Scored, unitTitles: boolean[], unitBodies: boolean[]): string {
  return plan.units
    .map((u, i) => ({ u, i, w: s.unitScores[i] ?? 0, t: unitTitles[i] === true, b: unitBodies[i] === true }))
    .filter((x) => x.t || x.b)
    .sort((a, b) => b.w - a.w)
    .slice(0, 6)
    .map(({ u, w, t, b }) => `${u.shown} ${t && b ? 't+b' : t ? 't' : 'b'} ${w.toFixed(2)}`)
    .join(' · ');
}
