// The SQL path of the keyword ranker (no memory index, one loading, or a query with -term): document frequencies
// estimated from the 1-in-32 sample index, candidates from the rarest lexemes' postings (bounded by `candidates`)
// plus bounded title, all-terms, phrase and exact-title sources, and only those candidates' vectors read for title
// and body term frequencies. See search.ts for the steps.
import { sql, type RawBuilder } from 'kysely';
import type { Database } from '../../../src/sdk/index.js';
import { filterSql, hasFilters, type SearchFilters } from '../filters.js';
import { idf, unitScores, type UnitLexemes, type VaultStats } from './bm25.js';
import { cjkPrefixQuery, hasCjk, isSingleCjk } from './cjk.js';
import { phraseText } from './index-text.js';
import type { Scored } from './memory-score.js';
import { DEFAULT_RESCORE, type KeywordOptions, type KeywordResult, type RankingOptions } from './options.js';
import { lexemeQuery, render } from './page.js';
import { planText, type ParsedQuery, type QueryPlan } from './query-parse.js';

/** The sample index (migration 0006) holds the vectors of notes whose id is a multiple of this. */
const DF_SAMPLE = 32;
/** A lexeme seen at least this often in the sample has its document frequency estimated from it. */
const DF_SAMPLE_MIN = 8;
/** Generating lexemes are flagged per candidate in one integer. */
const MAX_GENERATING = 30;

interface Compiled {
  q_all: string;
  q_pos: string;
  q_any: string;
  units: string[];
  lex: Array<[number, number, string]> | null;
  sampled: Array<[string, number]> | null;
  docs: number | string | null;
  total_len: number | string | null;
}

function tsq(configs: readonly string[], text: string): RawBuilder<unknown> {
  return sql.join(
    configs.map((c) => sql`websearch_to_tsquery(${c}::regconfig, ${text})`),
    sql` || `,
  );
}

/**
 * A note's vector matches `q`, in the form the body GIN index answers: that index holds the parsed words only
 * (`ts_filter(tsv, '{a,d}')`, search migration 0009), so a query holding a CJK lexeme (weights B and C) reads the
 * vectors instead. For a query without one the two forms select the same notes.
 */
function bodyMatch(q: RawBuilder<unknown>, cjk: boolean): RawBuilder<unknown> {
  return cjk ? sql`k.tsv @@ ${q}` : sql`ts_filter(k.tsv, '{a,d}') @@ ${q}`;
}

/** One round trip: the tsqueries, each unit's lexemes per config, each lexeme's count in the df sample, the vault's totals. */
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
           (SELECT json_agg(json_build_array(d.ord - 1, d.cord - 1, d.lexeme)) FROM lx d) AS lex,
           -- The sample index's posting list is read, not the vectors (a one-lexeme bitmap needs no recheck).
           (SELECT json_agg(json_build_array(d.lexeme,
                     (SELECT count(*)::int FROM search_keyword k WHERE k.note_id % 32 = 0 AND k.vault_id + 0 = ${vaultId}
                        AND k.tsv @@ (quote_literal(d.lexeme) || CASE WHEN d.lexeme = ANY(${singleCjk}::text[]) THEN ':*' ELSE '' END)::tsquery)))
              FROM (SELECT DISTINCT lexeme FROM lx) d) AS sampled,
           s.docs, s.total_len
    FROM base LEFT JOIN search_keyword_stats s ON s.vault_id = ${vaultId}`.execute(db);
  // The index holds a lone CJK character only where its run ends: as a query word it is a prefix of bigrams.
  const c = r.rows[0];
  return {
    ...c,
    q_all: cjkPrefixQuery(c.q_all),
    q_pos: cjkPrefixQuery(c.q_pos),
    q_any: cjkPrefixQuery(c.q_any),
    units: c.units.map((u) => u && cjkPrefixQuery(u)),
  };
}

/** The ranking in SQL: what keywordSearch answers when the memory index cannot. */
export async function sqlSearch(
  db: Database,
  vaultId: number,
  query: string,
  parsed: ParsedQuery,
  plan: QueryPlan,
  filters: SearchFilters,
  o: KeywordOptions,
  ranking: RankingOptions,
): Promise<KeywordResult> {
  const empty = { hits: [], termsTotal: plan.units.length, capped: false, allCount: 0, dropped: plan.dropped };
  const c = await compile(db, vaultId, o.configs, plan);
  if (!c.q_any) return empty;

  // Lexemes: one slot each; units keep, per config, the slots their text became.
  const sampled = new Map((c.sampled ?? []).map(([l, n]) => [l, Number(n)]));
  const slots = new Map<string, { i: number; sample: number }>();
  const units: Array<{ perConfig: number[][] }> = plan.units.map(() => ({ perConfig: o.configs.map(() => []) }));
  for (const [u, cfg, lexeme] of c.lex ?? []) {
    let slot = slots.get(lexeme);
    if (!slot) slots.set(lexeme, (slot = { i: slots.size, sample: sampled.get(lexeme) ?? 0 }));
    units[u]?.perConfig[cfg]?.push(slot.i);
  }
  const lexemes = [...slots.keys()];
  if (!lexemes.length) return empty;
  const docs = Number(c.docs ?? 0);
  const stats: VaultStats = { docs, avgLength: docs > 0 ? Number(c.total_len ?? 0) / docs : 0 };
  // Estimated document frequencies: the sample scaled up; a lexeme too rare for the sample is counted exactly
  // below if it generates candidates (the rare ones always do), else it is taken as half the sample step.
  const estimate = lexemes.map((l) => {
    const n = slots.get(l)!.sample;
    return n >= DF_SAMPLE_MIN ? n * DF_SAMPLE : Math.max(n, 0.5) * DF_SAMPLE;
  });

  // Candidates: every note holding one of the rarest lexemes, as long as their document frequencies add up
  // to at most `candidates`; the common ones only score what the rare ones (and titles, and the all-terms
  // match) brought in. When every lexeme is common, the rarest one's first `candidates` notes stand in.
  const byDf = lexemes.map((_, i) => i).sort((a, b) => estimate[a] - estimate[b] || a - b);
  const generating: number[] = [];
  let budget = o.candidates;
  for (const i of byDf) {
    if (generating.length >= MAX_GENERATING || (generating.length && estimate[i] > budget)) break;
    generating.push(i);
    budget -= estimate[i];
  }
  let capped = estimate[generating[0]] > o.candidates;
  const f = filterSql(filters);
  const join = hasFilters(filters) ? sql`JOIN notes n ON n.id = k.note_id` : sql``;
  const cap = o.candidates;
  const rescore = Math.max(o.limit, o.rescore ?? DEFAULT_RESCORE);
  // Side sources only add candidates the rare lexemes missed, each bounded: the scored set stays near `rescore`.
  const sideCap = Math.max(10, Math.floor(rescore / 4));
  const multi = plan.units.length > 1 && !plan.hasOr;
  const bodyCheck = c.q_any.includes('!') ? sql` AND k.tsv @@ ${c.q_any}::tsquery` : sql``;
  const tw = Math.max(1, ranking.titleWeight);
  const genBit = new Map(generating.map((slot, bit) => [slot, bit]));
  // A lexeme's occurrences in one field: in the body, ts_rank_cd's weights (D, C, B, A order) picking the body's
  // parsed words (D) and CJK bigrams (C) of the note's detoasted vector; in the title, the small title vector (the
  // same A and B lexemes), so the title costs no second pass over a long note's vector. A generating lexeme's is
  // read only where its posting list says the note holds it, so a long question costs what its candidates hold,
  // not lexemes × notes.
  const countCols = (weights: string, vector: RawBuilder<unknown>) =>
    sql.join(
      lexemes.map((l, slot) => {
        const rank = sql`ts_rank_cd(${weights}::real[], ${vector}, ${lexemeQuery(l)}::tsquery, 0)`;
        const bit = genBit.get(slot);
        return bit === undefined
          ? rank
          : sql`CASE WHEN c.mask IS NULL OR c.mask & ${1 << bit} <> 0 THEN ${rank} ELSE 0 END`;
      }),
    );
  // A note holding the whole query as a phrase ranks next after exact titles: that is what a pasted sentence asks for.
  const phraseable =
    plan.units.length > 1 && !plan.hasOr && !plan.negated.length && !parsed.units.some((u) => u.startsWith('"'));
  const phraseQ = phraseable
    ? sql.join(
        o.configs.map((cfg) => sql`phraseto_tsquery(${cfg}::regconfig, ${phraseText(query)})`),
        sql` || `,
      )
    : sql`''::tsquery`;
  const r = await sql<{
    note_id: string;
    exact: boolean;
    phrase: boolean;
    body_len: number;
    tf: number[];
    title_tf: number[];
    df: Array<[number, number]> | null;
    gen_n: number;
  }>`
    WITH g AS (SELECT * FROM unnest(${generating.map((i) => lexemeQuery(lexemes[i]))}::text[],
                                    ${generating.map((i) => hasCjk(lexemes[i]))}::bool[]) WITH ORDINALITY AS g(q, cjk, bit)),
    post AS (
      SELECT g.bit - 1 AS bit, p.note_id FROM g CROSS JOIN LATERAL (
        SELECT k.note_id FROM search_keyword k ${join}
        WHERE NOT g.cjk AND ${bodyMatch(sql`g.q::tsquery`, false)} AND k.vault_id + 0 = ${vaultId} ${f} LIMIT ${cap}) p
      UNION ALL
      SELECT g.bit - 1 AS bit, p.note_id FROM g CROSS JOIN LATERAL (
        SELECT k.note_id FROM search_keyword k ${join}
        WHERE g.cjk AND ${bodyMatch(sql`g.q::tsquery`, true)} AND k.vault_id + 0 = ${vaultId} ${f} LIMIT ${cap}) p
    ), df AS (
      SELECT bit, count(*)::int AS n FROM post GROUP BY bit
    ), gen AS (
      SELECT p.note_id, sum(ln(1 + (${docs}::float8 - df.n + 0.5) / (df.n + 0.5))) AS s, bit_or(1 << p.bit::int) AS mask
      FROM post p JOIN df USING (bit) GROUP BY p.note_id ORDER BY s DESC, p.note_id LIMIT ${rescore}
    ), side AS (
      (SELECT k.note_id FROM search_keyword k ${join}
       WHERE ${multi && c.q_all ? sql`${bodyMatch(sql`${c.q_all}::tsquery`, hasCjk(c.q_all))} AND k.vault_id + 0 = ${vaultId} ${f}` : sql`false`} LIMIT ${sideCap})
      UNION
      (SELECT k.note_id FROM search_keyword k ${join}
       WHERE k.title_tsv @@ ${c.q_pos}::tsquery AND k.vault_id + 0 = ${vaultId} ${bodyCheck} ${f} LIMIT ${sideCap})
      UNION
      (SELECT k.note_id FROM search_keyword k ${join}
       WHERE k.title_keys @> ARRAY[${plan.exact}]::text[] AND k.vault_id + 0 = ${vaultId} ${f} LIMIT 20)
    ), phrase AS (
      SELECT k.note_id FROM search_keyword k ${join}
      WHERE ${phraseable ? sql`${bodyMatch(sql`(${phraseQ})`, hasCjk(query))} AND k.vault_id + 0 = ${vaultId} ${f}` : sql`false`} LIMIT 20
    ), c AS (
      SELECT note_id, max(mask) AS mask, bool_or(phrase) AS phrase FROM (
        SELECT note_id, mask, false AS phrase FROM gen
        UNION ALL SELECT note_id, NULL, false FROM side
        UNION ALL SELECT note_id, NULL, true FROM phrase
      ) u GROUP BY note_id
    )
    SELECT c.note_id, (k.title_keys @> ARRAY[${plan.exact}]::text[]) AS exact, c.phrase, k.body_len,
           ARRAY[${countCols('{1,1,0,0}', sql`v.v`)}]::real[] AS tf,
           ARRAY[${countCols('{0,0,1,1}', sql`k.title_tsv`)}]::real[] AS title_tf,
           (SELECT json_agg(json_build_array(bit, n)) FROM df) AS df, (SELECT count(DISTINCT note_id)::int FROM post) AS gen_n
    -- One detoasted copy per row: every ts_rank_cd reads it instead of decompressing the stored vector again.
    FROM c JOIN search_keyword k ON k.note_id = c.note_id CROSS JOIN LATERAL (SELECT k.tsv || ''::tsvector AS v OFFSET 0) v
    ${plan.negated.length ? sql`WHERE v.v @@ ${c.q_any}::tsquery OR (k.title_keys @> ARRAY[${plan.exact}]::text[])` : sql``}`.execute(
    db,
  );
  const first = r.rows[0];
  // Exact counts for the generating lexemes (their posting lists were read whole unless capped).
  const dfs = estimate.slice();
  if (first) {
    const counted = new Map((first.df ?? []).map(([bit, n]) => [Number(bit), Number(n)]));
    generating.forEach((slot, bit) => (dfs[slot] = counted.get(bit) ?? 0));
  }
  const idfs = dfs.map((d) => idf(d, stats.docs));
  // Bounded: a generating lexeme's postings were cut at `candidates`, or more notes held rare lexemes than were rescored.
  if (first) capped ||= first.gen_n > rescore || (first.df ?? []).some(([, n]) => Number(n) >= cap);

  const scored: Scored[] = [];
  for (const row of r.rows) {
    const body = row.tf.map(Number);
    const title = row.title_tf.map(Number);
    const tf = body.map((x, i) => x + tw * title[i]);
    if (!tf.some((x) => x > 0) && !row.exact) continue; // a side hit of a negated query, or an exact title holding none
    const per = unitScores(units as UnitLexemes[], idfs, body, title, tw, Number(row.body_len), stats, ranking);
    const hits = units.map((u) => u.perConfig.some((slotsOf) => slotsOf.length > 0 && slotsOf.every((s) => tf[s] > 0)));
    const matched = hits.filter(Boolean).length;
    scored.push({
      id: Number(row.note_id),
      exact: row.exact,
      phrase: row.phrase === true,
      score: per.reduce((a, b) => a + b, 0),
      unitScores: per,
      hits,
      match: matched === plan.units.length ? 'all' : 'any',
      tf,
      inTitle: title.map((x) => x > 0),
    });
  }
  let pool = scored;
  if (!o.fill || plan.units.length < 2 || plan.hasOr)
    pool = scored.filter((s) => s.match === 'all' || s.exact || plan.hasOr);
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
  return render(db, query, plan, units, lexemes, ranked, tw, o, capped);
}
