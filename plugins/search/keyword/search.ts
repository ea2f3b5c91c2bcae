// Keyword search over search_keyword, ranked BM25F in three bounded steps: (1) the query becomes units of evidence
// (stop words and question scaffolding dropped, CJK words as bigrams) and each lexeme's document frequency is
// estimated from a 1-in-32 sample index; (2) the rarest lexemes, up to `candidates` postings, are read from the
// GIN index without touching the vectors, each note scored by the IDF of the rare lexemes it holds, and only the
// best `rescore` of those (plus title, all-terms, phrase and exact-title hits) have their vectors read for term
// frequencies, title hits counted `titleWeight` times; (3) the page's rows get their paths and snippets.
// Exact title/alias matches rank first, then whole-query phrases. No step's cost grows with the vault's size
// beyond the postings it is allowed to read.
import { sql, type RawBuilder } from 'kysely';
import type { Database } from '../../../src/sdk/index.js';
import { filterSql, hasFilters, type SearchFilters } from '../filters.js';
import { cjkSnippet, escapeRegExp, termSnippet } from '../ranking/snippet.js';
import { idf, unitScores, type UnitLexemes, type VaultStats } from './bm25.js';
import { cjkPrefixQuery, hasCjk, isSingleCjk } from './cjk.js';
import { feedbackApplies, readVectors, relevanceModel, type FeedbackOptions } from './feedback.js';
import { scoreScan, type Scored } from './memory-score.js';
import { phraseText } from './index-text.js';
import { minDistance, PROXIMITY_DOCS, proximityBonus, readPositions } from './proximity.js';
import type { KeywordMemory, VaultMemoryIndex } from './memory-index.js';
import { parseQuery, planQuery, planText, type ParsedQuery, type QueryPlan } from './query-parse.js';

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

/** The sample index (migration 0006) holds the vectors of notes whose id is a multiple of this. */
const DF_SAMPLE = 32;
/** A lexeme seen at least this often in the sample has its document frequency estimated from it. */
const DF_SAMPLE_MIN = 8;
/** Characters of a note read for a snippet (termSnippet), and how far before the first match they start. */
const SNIPPET_WINDOW = 2400;
const SNIPPET_LEAD = 600;
/** Characters of a snippet row read with the page: a window that starts at the note's opening fits. */
const SNIPPET_READ = SNIPPET_WINDOW + SNIPPET_LEAD;
/** Query lexemes looked for (strpos) to place the window: a long question's first ones suffice. */
const SNIPPET_PROBES = 8;
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

/** A tsquery matching one lexeme (a lone CJK character as the prefix of its bigrams). */
function lexemeQuery(lexeme: string): string {
  return `'${lexeme.replace(/'/g, "''")}'${isSingleCjk(lexeme) ? ':*' : ''}`;
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
  // A lexeme's occurrences in one field, ts_rank_cd's weights in D, C, B, A order picking it: the body's parsed words
  // (D) and CJK bigrams (C), or the title's (A, B). A generating lexeme's is read only where its posting list says the
  // note holds it, so a long question costs what its candidates hold, not lexemes × notes.
  const countCols = (weights: string) =>
    sql.join(
      lexemes.map((l, slot) => {
        const rank = sql`ts_rank_cd(${weights}::real[], v.v, ${lexemeQuery(l)}::tsquery, 0)`;
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
           ARRAY[${countCols('{1,1,0,0}')}]::real[] AS tf, ARRAY[${countCols('{0,0,1,1}')}]::real[] AS title_tf,
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

/** The page's rows: paths, titles, where each lexeme matched, snippets for the first `snippetRows`. */
/** The vault's change stamp as a query read it (rev, and the note count the stats row holds). */
interface Stamp {
  readonly rev: number;
  readonly docs: number;
}

async function render(
  db: Database,
  query: string,
  plan: QueryPlan,
  units: Array<{ perConfig: number[][] }>,
  lexemes: string[],
  ranked: Scored[],
  tw: number,
  o: KeywordOptions,
  capped: boolean,
  stampOf?: number,
): Promise<KeywordResult & { stamp?: Stamp }> {
  const termsTotal = plan.units.length;
  const ids = ranked.map((x) => x.id);
  const snipIds = ids.slice(0, o.snippetRows);
  const cjk = hasCjk(query);
  // Where each lexeme sits in the title: known to the memory ranker, asked of the title vector otherwise.
  const titlesKnown = ranked.every((s) => s.inTitle);
  const titleCols = titlesKnown
    ? sql`NULL::boolean[]`
    : sql`ARRAY[${sql.join(lexemes.map((l) => sql`(k.title_tsv @@ ${lexemeQuery(l)}::tsquery)`))}]`;
  // A snippet row's window is SNIPPET_WINDOW characters from a little before the first place a query lexeme occurs
  // (a lexeme being the start of most words it stems) in the note's first snippetScanChars; no lexeme there: the
  // note's opening. The note's first SNIPPET_READ characters are read with the page (PostgreSQL decompresses only
  // that prefix of a stored body), and the rest up to snippetScanChars only for a row whose window is not inside
  // them. Reading snippetScanChars for every row, and finding the lexemes with lower()/strpos, took most of a long
  // question's time on long notes. The snippet is made from the window here (termSnippet), not by ts_headline.
  const probes = [...new Set(lexemes.filter((l) => l.length >= 2 || hasCjk(l)).map((l) => l.toLowerCase()))].slice(
    0,
    SNIPPET_PROBES,
  );
  const probe = probes.length ? new RegExp(probes.map(escapeRegExp).join('|'), 'iu') : undefined;
  const firstRead = Math.min(SNIPPET_READ, o.snippetScanChars);
  const stampCols =
    stampOf === undefined
      ? sql``
      : sql`, (SELECT s.rev FROM search_keyword_stats s WHERE s.vault_id = ${stampOf}) AS stamp_rev, (SELECT s.docs FROM search_keyword_stats s WHERE s.vault_id = ${stampOf}) AS stamp_docs`;
  const details = await sql<{
    note_id: string;
    path: string;
    title: string;
    head: string;
    in_title: boolean[] | null;
    scan: string | null;
    /** Stored bytes of the body (no decompression): at least its length in characters. */
    bytes: number;
    stamp_rev?: string | number | null;
    stamp_docs?: string | number | null;
  }>`
    SELECT k.note_id, n.path, n.title, k.head, ${titleCols} AS in_title ${stampCols},
           CASE WHEN k.note_id = ANY(${snipIds}::bigint[]) THEN left(k.body, ${firstRead}) END AS scan,
           octet_length(k.body) AS bytes
    FROM search_keyword k JOIN notes n ON n.id = k.note_id
    WHERE k.note_id = ANY(${ids}::bigint[])`.execute(db);
  const further = details.rows.filter(
    // (`left` counts characters, JS UTF-16 units: a prefix holding astral characters is longer than firstRead.)
    (d) => d.scan !== null && d.scan.length >= firstRead && d.bytes > firstRead && !windowInside(d.scan, probe),
  );
  if (further.length) {
    const more = await sql<{
      note_id: string;
      scan: string;
    }>`SELECT note_id, left(body, ${o.snippetScanChars}) AS scan FROM search_keyword WHERE note_id = ANY(${further.map((d) => d.note_id)}::bigint[])`.execute(
      db,
    );
    const byNote = new Map(more.rows.map((r) => [r.note_id, r.scan]));
    for (const d of further) d.scan = byNote.get(d.note_id) ?? d.scan;
  }
  for (const d of details.rows) if (d.scan) d.scan = snippetWindow(d.scan, probe);
  const byId = new Map(details.rows.map((d) => [Number(d.note_id), d]));
  const hits: KeywordHit[] = [];
  for (const s of ranked) {
    const d = byId.get(s.id);
    if (!d) continue;
    const inTitle = lexemes.map((_, i) => (s.inTitle ? s.inTitle[i] : d.in_title?.[i] === true) && s.tf[i] > 0);
    const inBody = lexemes.map((_, i) => s.tf[i] - (inTitle[i] ? tw : 0) > 0.5);
    const matchedIn: Array<'title' | 'body'> = [];
    if (inTitle.some(Boolean) || s.exact) matchedIn.push('title');
    if (inBody.some(Boolean)) matchedIn.push('body');
    const onlyTitle = matchedIn.length === 1 && matchedIn[0] === 'title';
    let snippet =
      onlyTitle || !d.scan
        ? null
        : termSnippet(
            d.scan,
            [...lexemes, ...plan.units.flatMap((u) => u.shown.split(/[^\p{L}\p{N}]+/u))],
            o.snippetChars,
          );
    if (!onlyTitle && cjk && d.scan && (!snippet || !snippet.includes('«')))
      snippet =
        cjkSnippet(
          d.scan,
          plan.units.map((u) => u.shown),
          o.snippetChars,
        ) ?? snippet;
    const unitIn = (flags: boolean[]) => units.map((u) => u.perConfig.some((slotsOf) => slotsOf.some((i) => flags[i])));
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
      explain: explainRow(plan, s, unitIn(inTitle), unitIn(inBody)),
    });
  }
  const d0 = details.rows[0];
  const stamp =
    stampOf !== undefined && d0 ? { rev: Number(d0.stamp_rev ?? 0), docs: Number(d0.stamp_docs ?? 0) } : undefined;
  return {
    hits,
    termsTotal,
    capped,
    allCount: hits.filter((h) => h.match === 'all').length,
    dropped: plan.dropped,
    ...(stamp ? { stamp } : {}),
  };
}

/** The stretch of a note's text a snippet is made from: SNIPPET_WINDOW characters from a little before the first probe hit. */
function snippetWindow(text: string, probe: RegExp | undefined): string {
  const at = probe ? text.search(probe) : -1;
  if (at <= SNIPPET_LEAD) return text.slice(0, SNIPPET_WINDOW);
  let start = at - SNIPPET_LEAD;
  // Never start on the second half of a surrogate pair.
  const code = text.charCodeAt(start);
  if (code >= 0xdc00 && code <= 0xdfff) start++;
  return text.slice(start, start + SNIPPET_WINDOW);
}

/** Whether the first probe hit's window lies inside `text` (so reading further would not change the snippet). */
function windowInside(text: string, probe: RegExp | undefined): boolean {
  const at = probe ? text.search(probe) : -1;
  return at >= 0 && Math.max(0, at - SNIPPET_LEAD) + SNIPPET_WINDOW <= text.length;
}

/** The matched units, heaviest first: `shown where weight`, where is t (title), b (body) or t+b. At most six. */
function explainRow(plan: QueryPlan, s: Scored, unitTitles: boolean[], unitBodies: boolean[]): string {
  return plan.units
    .map((u, i) => ({ u, i, w: s.unitScores[i] ?? 0, t: unitTitles[i] === true, b: unitBodies[i] === true }))
    .filter((x) => x.t || x.b)
    .sort((a, b) => b.w - a.w)
    .slice(0, 6)
    .map(({ u, w, t, b }) => `${u.shown} ${t && b ? 't+b' : t ? 't' : 'b'} ${w.toFixed(2)}`)
    .concat(s.expansion ? [`feedback ${s.expansion.toFixed(2)}`] : [])
    .concat(s.proximity ? [`near ${s.proximity.toFixed(2)}`] : [])
    .join(' · ');
}

/**
 * The same ranking over the in-memory index: exact document frequencies and term frequencies for every note
 * holding a query lexeme, no vector read. SQL is asked for the query's lexemes (PostgreSQL stays the tokeniser)
 * and the vault's change stamp, for the phrase check of the best all-terms notes, and for the page's rows.
 * Undefined when the memory index cannot answer (not loaded, or behind by more than a query should wait for).
 */
async function memorySearch(
  db: Database,
  vaultId: number,
  query: string,
  parsed: ParsedQuery,
  plan: QueryPlan,
  filters: SearchFilters,
  o: KeywordOptions,
  ranking: RankingOptions,
  memory: KeywordMemory,
): Promise<KeywordResult | undefined> {
  // A unit's lexemes per config come from PostgreSQL once, then from the memory's cache (the same text under the
  // same configs always becomes the same lexemes); a query whose units are all cached needs no SQL before ranking.
  const cfgKey = o.configs.join(',');
  const missing = plan.units.filter((u) => !memory.lexemes.has(`${cfgKey}\u0001${u.text}`));
  let stamp: Stamp | undefined;
  if (missing.length) {
    const r = await sql<{
      lex: Array<[number, number, string]> | null;
      rev: string | number | null;
      docs: string | number | null;
    }>`
      WITH lx AS (
        SELECT u.ord, c.cord, l.lexeme
        FROM unnest(${missing.map((u) => u.text)}::text[]) WITH ORDINALITY AS u(txt, ord)
        CROSS JOIN unnest(${`{${cfgKey}}`}::regconfig[]) WITH ORDINALITY AS c(cfg, cord)
        CROSS JOIN LATERAL unnest(tsvector_to_array(to_tsvector(c.cfg, u.txt))) AS l(lexeme)
      )
      SELECT (SELECT json_agg(json_build_array(d.ord - 1, d.cord - 1, d.lexeme)) FROM lx d) AS lex, s.rev, s.docs
      FROM (SELECT 1) one LEFT JOIN search_keyword_stats s ON s.vault_id = ${vaultId}`.execute(db);
    const c = r.rows[0];
    const found = missing.map(() => [] as Array<[number, string]>);
    for (const [u, cfg, lexeme] of c?.lex ?? []) found[u]?.push([cfg, lexeme]);
    missing.forEach((u, i) => memory.rememberLexemes(`${cfgKey}\u0001${u.text}`, found[i]));
    stamp = { rev: Number(c?.rev ?? 0), docs: Number(c?.docs ?? 0) };
  }
  let mem = stamp ? await memory.current(vaultId, stamp.rev, stamp.docs) : memory.loaded(vaultId);
  if (!mem) return undefined;
  // Filters (folder, tags, frontmatter) are the notes table's: the notes they let through, read once, bound the
  // candidates; document frequencies and lengths stay the vault's, as on the SQL path's sample.
  const allowed = hasFilters(filters)
    ? new Set(
        (
          await sql<{
            id: string;
          }>`SELECT n.id FROM notes n WHERE n.vault_id = ${vaultId} ${filterSql(filters)}`.execute(db)
        ).rows.map((r) => Number(r.id)),
      )
    : undefined;
  // Ranked on the index as it stands; the page's query reads the stamp, and if a write landed meanwhile the
  // index catches up and ranks again (twice at most, then SQL).
  for (let attempt = 0; mem && attempt < 2; attempt++) {
    const out = await memoryRank(db, vaultId, query, parsed, plan, o, ranking, mem, memory, allowed);
    const seen = out.stamp ?? stamp ?? (await readStamp(db, vaultId));
    if (memory.isFresh(mem, seen.rev, seen.docs)) {
      const { stamp: _s, ...result } = out;
      return result;
    }
    stamp = seen;
    mem = await memory.current(vaultId, seen.rev, seen.docs);
  }
  return undefined;
}

async function readStamp(db: Database, vaultId: number): Promise<Stamp> {
  const r = await sql<{
    rev: string | number;
    docs: string | number;
  }>`SELECT rev, docs FROM search_keyword_stats WHERE vault_id = ${vaultId}`.execute(db);
  return { rev: Number(r.rows[0]?.rev ?? 0), docs: Number(r.rows[0]?.docs ?? 0) };
}

async function memoryRank(
  db: Database,
  vaultId: number,
  query: string,
  parsed: ParsedQuery,
  plan: QueryPlan,
  o: KeywordOptions,
  ranking: RankingOptions,
  mem: VaultMemoryIndex,
  memory: KeywordMemory,
  allowed?: ReadonlySet<number>,
): Promise<KeywordResult & { stamp?: Stamp }> {
  const termsTotal = plan.units.length;
  const empty: KeywordResult = { hits: [], termsTotal, capped: false, allCount: 0, dropped: plan.dropped };
  const cfgKey = o.configs.join(',');
  const slots = new Map<string, number>();
  const units: Array<{ perConfig: number[][] }> = plan.units.map(() => ({ perConfig: o.configs.map(() => []) }));
  plan.units.forEach((u, ui) => {
    for (const [cfg, lexeme] of memory.lexemes.get(`${cfgKey}\u0001${u.text}`) ?? []) {
      let slot = slots.get(lexeme);
      if (slot === undefined) slots.set(lexeme, (slot = slots.size));
      units[ui]?.perConfig[cfg]?.push(slot);
    }
  });
  const lexemes = [...slots.keys()];
  if (!lexemes.length) return empty;
  const exactIds = new Set(mem.exactTitle(plan.exact).filter((id) => !allowed || allowed.has(id)));
  const tw = Math.max(1, ranking.titleWeight);
  const L = lexemes.length;
  const onlyAll = !o.fill || plan.units.length < 2 || plan.hasOr;
  const U = units.length;
  const sc = { units, L, exactIds, allowed, onlyAll, hasOr: plan.hasOr, ranking, tw };
  let pass = scoreScan(mem.scan(lexemes, [...exactIds]), sc);
  // The phrase tier: among the best `rescore` notes holding every unit (by score), those holding the whole query as a
  // phrase, checked on their stored vectors (one primary-key read each). Asking the GIN index for the first 20 phrase
  // holders instead rechecked every note holding all the words, tens of ms for common pairs (`docker network`).
  const phraseable = plan.units.length > 1 && !plan.hasOr && !parsed.units.some((u) => u.startsWith('"'));
  const holders = phraseable
    ? pass.materialise(
        top(
          pass.candidates.filter((ci) => pass.holdsAll[ci]),
          Math.max(o.limit, o.rescore ?? DEFAULT_RESCORE),
          pass.byIndex,
        ),
      )
    : [];
  if (holders.length) {
    const phraseQ = sql.join(
      o.configs.map((cfg) => sql`phraseto_tsquery(${cfg}::regconfig, ${phraseText(query)})`),
      sql` || `,
    );
    const p = await sql<{
      note_id: string;
      hit: boolean;
    }>`SELECT k.note_id, (k.tsv @@ (${phraseQ})) AS hit FROM search_keyword k WHERE k.note_id = ANY(${holders.map((h) => h.id)}::bigint[])`.execute(
      db,
    );
    const inPhrase = new Set(p.rows.filter((x) => x.hit).map((x) => Number(x.note_id)));
    for (const s of holders) if (inPhrase.has(s.id)) s.phrase = true;
  }
  // Feedback for a question the first ranking did not answer as a lookup: the expansion from its best notes, then
  // every note holding a query lexeme or an expansion term scored again. Exact titles and phrase holders keep their tiers.
  let phrased = holders.filter((s) => s.phrase);
  if (feedbackApplies(plan, parsed, ranking, exactIds.size > 0 || phrased.length > 0)) {
    const best = pass.materialise(top(pass.candidates, ranking.feedbackDocs, pass.byIndex));
    const vectors = await readVectors(
      db,
      best.map((s) => s.id),
    );
    const terms = relevanceModel(
      best.flatMap((s) => (vectors.has(s.id) ? [{ score: s.score, vector: vectors.get(s.id)! }] : [])),
      ranking.feedbackTerms,
    );
    if (terms.length) {
      pass = scoreScan(mem.scan([...lexemes, ...terms.map((t) => t.lexeme)], [...exactIds]), sc, {
        terms,
        weight: ranking.feedbackWeight,
      });
      phrased = [];
    }
  }
  // Proximity: the best PROXIMITY_DOCS notes gain by how close two of the query's units sit (Tao & Zhai's MinDist).
  if (ranking.proximity > 0 && U > 1 && !plan.hasOr) {
    const best = top(pass.candidates, PROXIMITY_DOCS, pass.byIndex);
    const wanted = lexemes.filter((l) => !isSingleCjk(l));
    const positions = await readPositions(
      db,
      best.map((ci) => pass.scan.notes[ci]),
      wanted,
    );
    for (const ci of best) {
      const at = positions.get(pass.scan.notes[ci]);
      if (!at) continue;
      const perUnit = units.map((u) => u.perConfig.flat().flatMap((i) => at.get(lexemes[i]) ?? []));
      const bonus = proximityBonus(minDistance(perUnit.filter((x) => x.length)), ranking.proximity);
      if (bonus > 0) pass.boost(ci, bonus);
    }
  }
  const { candidates, byIndex, materialise, matchedUnits } = pass;
  const byScore = (a: Scored, b: Scored) => b.score - a.score || a.id - b.id;
  // Only the page is sorted: exact titles, phrase holders, and the best by score (all-terms ones too, for allTermsFirst).
  const page = new Set<Scored>([
    ...materialise(candidates.filter((ci) => exactIds.has(pass.scan.notes[ci]))),
    ...phrased,
    ...materialise(top(candidates, o.limit, byIndex)),
  ]);
  if (ranking.allTermsFirst)
    for (const s of materialise(
      top(
        candidates.filter((ci) => matchedUnits[ci] === U),
        o.limit,
        byIndex,
      ),
    ))
      page.add(s);
  const ranked = [...page]
    .sort(
      (a, b) =>
        Number(b.exact) - Number(a.exact) ||
        Number(b.phrase) - Number(a.phrase) ||
        (ranking.allTermsFirst ? Number(b.match === 'all') - Number(a.match === 'all') : 0) ||
        byScore(a, b),
    )
    .slice(0, o.limit);
  if (!ranked.length) return empty;
  return render(db, query, plan, units, lexemes, ranked, tw, o, false, vaultId);
}

/** The `k` first of `list` under `cmp`, without sorting all of it when it is long. */
function top<T>(list: T[], k: number, cmp: (a: T, b: T) => number): T[] {
  if (list.length <= k * 4) return list.slice().sort(cmp).slice(0, k);
  const out: T[] = [];
  for (const x of list) {
    if (out.length < k) {
      out.push(x);
      if (out.length === k) out.sort(cmp);
      continue;
    }
    if (cmp(x, out[k - 1]) >= 0) continue;
    let i = k - 1;
    while (i > 0 && cmp(x, out[i - 1]) < 0) i--;
    out.splice(i, 0, x);
    out.pop();
  }
  return out.sort(cmp);
}
