// The memory path of the keyword ranker (the default): the same BM25F over the in-memory postings, exact
// document frequencies for every note holding a query lexeme, then the phrase tier, the optional feedback and
// proximity stages, and the page's rows. See search.ts for the steps.
import { sql } from 'kysely';
import type { Database } from '../../../src/sdk/index.js';
import { filterSql, hasFilters, type SearchFilters } from '../filters.js';
import { isSingleCjk } from './cjk.js';
import { feedbackApplies, readVectors, relevanceModel } from './feedback.js';
import { phraseText } from './index-text.js';
import type { KeywordMemory, VaultMemoryIndex } from './memory-index.js';
import { scoreScan, type Scored } from './memory-score.js';
import { DEFAULT_RESCORE, type KeywordOptions, type KeywordResult, type RankingOptions } from './options.js';
import { render, type Stamp } from './page.js';
import { minDistance, PROXIMITY_DOCS, proximityBonus, readPositions } from './proximity.js';
import type { ParsedQuery, QueryPlan } from './query-parse.js';

/**
 * The same ranking over the in-memory index: exact document frequencies and term frequencies for every note
 * holding a query lexeme, no vector read. SQL is asked for the query's lexemes (PostgreSQL stays the tokeniser)
 * and the vault's change stamp, for the phrase check of the best all-terms notes, and for the page's rows.
 * Undefined when the memory index cannot answer (not loaded, or behind by more than a query should wait for).
 */
export async function memorySearch(
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
