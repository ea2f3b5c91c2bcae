// Keyword search over search_keyword: all-terms matches ranked on a bounded candidate set (title hits,
// exact title/alias hits, and at most `candidates` body hits from the GIN index), then partial matches
// to fill the page. Details (terms k/n, where matched, snippets) are computed for page rows only.
import { sql, type RawBuilder } from 'kysely';
import type { Database } from '../../../src/sdk/index.js';
import { filterSql, hasFilters, type SearchFilters } from '../filters.js';
import { shapeSnippet } from '../ranking/snippet.js';
import { anyQueryText, negatedQueryText, parseQuery } from './query-parse.js';

export interface KeywordOptions {
  readonly configs: readonly string[];
  readonly limit: number;
  readonly candidates: number;
  readonly snippetRows: number;
  readonly snippetChars: number;
  readonly snippetScanChars: number;
  /** Fill a short page with partial (any-term) matches. */
  readonly fill: boolean;
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
}

export interface KeywordResult {
  readonly hits: KeywordHit[];
  /** Terms that survived the text search configs (stop words drop out). */
  readonly termsTotal: number;
  /** True when body candidates hit the cap, so ranking saw a bounded subset of the matches. */
  readonly capped: boolean;
  readonly allCount: number;
}

interface Compiled {
  q_all: string;
  q_any: string;
  q_pos: string;
  units: string[];
}

function tsq(configs: readonly string[], text: string): RawBuilder<unknown> {
  return sql.join(configs.map((c) => sql`websearch_to_tsquery(${c}::regconfig, ${text})`), sql` || `);
}

async function compile(db: Database, configs: readonly string[], query: string): Promise<Compiled> {
  const parsed = parseQuery(query);
  const neg = negatedQueryText(parsed);
  const anyText = anyQueryText(parsed);
  const unitCols = parsed.units.map((u) => sql`(${tsq(configs, u)})::text`);
  const r = await sql<{ q_all: string; q_any: string; q_pos: string; units: string[] }>`
    WITH base AS (SELECT ${tsq(configs, query)} AS q_all, ${tsq(configs, anyText || query)} AS q_pos,
                         ${neg ? tsq(configs, neg) : sql`''::tsquery`} AS q_neg)
    SELECT q_all::text AS q_all, q_pos::text AS q_pos,
           (CASE WHEN numnode(q_neg) = 0 THEN q_pos ELSE q_pos && !! q_neg END)::text AS q_any,
           ARRAY[${unitCols.length ? sql.join(unitCols) : sql`NULL::text`}]::text[] AS units
    FROM base`.execute(db);
  const row = r.rows[0];
  return { q_all: row.q_all, q_any: row.q_any, q_pos: row.q_pos, units: (row.units ?? []).filter((u): u is string => !!u && u.length > 0) };
}

async function rankPhase(db: Database, vaultId: number, q: string, exact: string, filters: SearchFilters, exclude: number[], limit: number, cap: number) {
  const f = filterSql(filters);
  // The full vector holds the title lexemes too, so a title match implies a full match unless the query
  // negates something (which the body may contain): only then is the full vector (detoasted) checked.
  const bodyCheck = q.includes('!') ? sql` AND k.tsv @@ ${q}::tsquery` : sql``;
  // The notes row is joined only when a filter reads it (every keyword row has one: ON DELETE CASCADE).
  const join = hasFilters(filters) ? sql`JOIN notes n ON n.id = k.note_id` : sql``;
  const r = await sql<{ note_id: string; exact: boolean; score: number; body_count: number }>`
    WITH title_hits AS (
      SELECT k.note_id FROM search_keyword k ${join}
      WHERE k.vault_id = ${vaultId} AND k.title_tsv @@ ${q}::tsquery ${bodyCheck} ${f} LIMIT ${cap}
    ), exact_hits AS (
      SELECT k.note_id FROM search_keyword k ${join}
      WHERE k.vault_id = ${vaultId} AND k.title_keys @> ARRAY[${exact}]::text[] AND k.tsv @@ ${q}::tsquery ${f} LIMIT 20
    ), body_hits AS (
      SELECT k.note_id FROM search_keyword k ${join}
      WHERE k.vault_id = ${vaultId} AND k.tsv @@ ${q}::tsquery ${f} LIMIT ${cap}
    ), cand AS (
      SELECT note_id FROM title_hits UNION SELECT note_id FROM exact_hits UNION SELECT note_id FROM body_hits
    )
    SELECT k.note_id, (k.title_keys @> ARRAY[${exact}]::text[]) AS exact, ts_rank(k.tsv, ${q}::tsquery, 1) AS score,
           (SELECT count(*)::int FROM body_hits) AS body_count
    FROM cand JOIN search_keyword k ON k.note_id = cand.note_id
    WHERE NOT (k.note_id = ANY(${exclude}::bigint[]))
    ORDER BY exact DESC, score DESC, k.note_id
    LIMIT ${limit}`.execute(db);
  return { rows: r.rows, bodyCount: r.rows[0]?.body_count ?? 0 };
}

export async function keywordSearch(db: Database, vaultId: number, query: string, filters: SearchFilters, o: KeywordOptions): Promise<KeywordResult> {
  const parsed = parseQuery(query);
  const c = await compile(db, o.configs, query);
  const termsTotal = c.units.length;
  if (!c.q_all && !c.q_any) return { hits: [], termsTotal, capped: false, allCount: 0 };
  const ranked: Array<{ id: number; exact: boolean; score: number; match: 'all' | 'any' }> = [];
  let capped = false;
  if (c.q_all) {
    const all = await rankPhase(db, vaultId, c.q_all, parsed.exact, filters, [], o.limit, o.candidates);
    capped = all.bodyCount >= o.candidates;
    for (const r of all.rows) ranked.push({ id: Number(r.note_id), exact: r.exact, score: Number(r.score), match: 'all' });
  }
  const allCount = ranked.length;
  if (o.fill && ranked.length < o.limit && c.q_any && termsTotal > 1 && !parsed.hasOr) {
    const any = await rankPhase(db, vaultId, c.q_any, parsed.exact, filters, ranked.map((r) => r.id), o.limit - ranked.length, o.candidates);
    capped ||= any.bodyCount >= o.candidates;
    for (const r of any.rows) ranked.push({ id: Number(r.note_id), exact: r.exact, score: Number(r.score), match: 'any' });
  }
  if (!ranked.length) return { hits: [], termsTotal, capped, allCount };
  const ids = ranked.map((r) => r.id);
  const snipIds = ids.slice(0, o.snippetRows);
  const unitChecks = c.units.length ? sql.join(c.units.map((u) => sql`(k.tsv @@ ${u}::tsquery)`)) : sql`NULL::boolean`;
  const details = await sql<{ note_id: string; path: string; title: string; head: string; in_title: boolean; in_body: boolean; unit_hits: boolean[] | null; headline: string | null }>`
    SELECT k.note_id, n.path, n.title, k.head,
           (k.title_tsv @@ ${c.q_pos}::tsquery) AS in_title,
           (ts_filter(k.tsv, '{d}') @@ ${c.q_pos}::tsquery) AS in_body,
           ARRAY[${unitChecks}] AS unit_hits,
           CASE WHEN k.note_id = ANY(${snipIds}::bigint[])
                THEN ts_headline(${o.configs[0]}::regconfig, left(k.body, ${o.snippetScanChars}), ${c.q_pos}::tsquery,
                     'StartSel=«, StopSel=», MaxWords=24, MinWords=8, MaxFragments=2, FragmentDelimiter=" … "')
           END AS headline
    FROM search_keyword k JOIN notes n ON n.id = k.note_id
    WHERE k.note_id = ANY(${ids}::bigint[])`.execute(db);
  const byId = new Map(details.rows.map((d) => [Number(d.note_id), d]));
  const hits: KeywordHit[] = [];
  for (const r of ranked) {
    const d = byId.get(r.id);
    if (!d) continue;
    const matchedIn: Array<'title' | 'body'> = [];
    if (d.in_title || r.exact) matchedIn.push('title');
    if (d.in_body) matchedIn.push('body');
    const termsMatched = (d.unit_hits ?? []).filter((x) => x === true).length;
    const onlyTitle = matchedIn.length === 1 && matchedIn[0] === 'title';
    hits.push({
      noteId: r.id,
      path: d.path,
      title: d.title,
      score: r.exact ? 1 + r.score : r.score,
      match: r.match,
      exactTitle: r.exact,
      matchedIn,
      termsMatched: r.match === 'all' ? termsTotal : termsMatched,
      termsTotal,
      snippet: onlyTitle ? null : shapeSnippet(d.headline, o.snippetChars),
      head: d.head,
    });
  }
  return { hits, termsTotal, capped, allCount };
}
