// One scoring pass of the memory ranker over a scan of the in-memory index: BM25F per query unit (the best config's
// sum over its lexemes), and with pseudo-relevance feedback the expansion terms' BM25 mixed in (RM3). Typed arrays
// for every candidate; only the notes a page or the phrase tier uses become rows. Pure arithmetic: no SQL.
import { idf, saturate, unitScores, type UnitLexemes, type VaultStats } from './bm25.js';
import type { ExpansionTerm } from './feedback.js';
import type { MemoryScan } from './memory-index.js';
import type { RankingOptions } from './options.js';

export interface Scored {
  id: number;
  exact: boolean;
  phrase: boolean;
  score: number;
  unitScores: number[];
  hits: boolean[];
  match: 'all' | 'any';
  /** Per lexeme slot: body occurrences + titleWeight × title occurrences (what matched where, for the row). */
  tf: number[];
  /** Per lexeme slot: whether the title holds it, when the ranker knows (the memory index counts title hits apart). */
  inTitle?: boolean[];
  /** What pseudo-relevance feedback's expansion terms added to the score, when the query had feedback. */
  expansion?: number;
  /** What the proximity of the query's units added to the score. */
  proximity?: number;
}

export interface ScoreContext {
  readonly units: ReadonlyArray<{ readonly perConfig: number[][] }>;
  /** The query's lexemes: the scan's first L slots (expansion terms follow them). */
  readonly L: number;
  readonly exactIds: ReadonlySet<number>;
  readonly allowed?: ReadonlySet<number>;
  /** Keep only notes holding every unit (no fill, one unit, or OR). */
  readonly onlyAll: boolean;
  readonly hasOr: boolean;
  readonly ranking: RankingOptions;
  /** The title weight, at least 1. */
  readonly tw: number;
}

export type ScorePass = ReturnType<typeof scoreScan>;

/**
 * One pass over a scan: the query's units over its first L lexemes, and with feedback, the expansion terms after
 * them (RM3: the query's mean unit score weighs `weight`, the expansion's BM25 the rest).
 */
export function scoreScan(scan: MemoryScan, c: ScoreContext, fb?: { terms: ExpansionTerm[]; weight: number }) {
  const { units, L, exactIds, allowed, onlyAll, ranking, tw } = c;
  const U = units.length;
  const evidence = units.map((u) => u.perConfig.some((slotsOf) => slotsOf.length > 0));
  const unitsWithEvidence = evidence.filter(Boolean).length;
  const S = L + (fb?.terms.length ?? 0);
  const stats: VaultStats = { docs: scan.docs, avgLength: scan.avgLength };
  const idfs = scan.df.map((d) => idf(d, stats.docs));
  // Every candidate is scored in typed arrays; only the ones a page or the phrase tier can use become rows.
  const C = scan.notes.length;
  const score = new Float64Array(C);
  const expansion = new Float64Array(C);
  const near = new Float64Array(C);
  const matchedUnits = new Uint8Array(C);
  const keep = new Uint8Array(C);
  const tf = new Float64Array(S);
  // "Holds every unit" counts the units that have lexemes: a word the config drops as a stop word (`have`) is held by
  // no note, and counting it once skipped the phrase tier for every phrase holding one.
  const holdsAll = new Uint8Array(C);
  for (let ci = 0; ci < C; ci++) {
    if (allowed && !allowed.has(scan.notes[ci])) continue;
    let any = false;
    const row = ci * S;
    for (let i = 0; i < S; i++) {
      tf[i] = scan.body[row + i] + tw * scan.title[row + i];
      if (tf[i] > 0) any = true;
    }
    const exact = exactIds.has(scan.notes[ci]);
    if (!any && !exact) continue;
    let total = 0;
    let matched = 0;
    let held = 0;
    for (let u = 0; u < U; u++) {
      let best = 0;
      let hit = false;
      for (const slotsOf of units[u].perConfig) {
        let sum = 0;
        let all = slotsOf.length > 0;
        for (const i of slotsOf) {
          if (tf[i] > 0)
            sum += idfs[i] * saturate(scan.body[row + i], scan.title[row + i], tw, scan.lengths[ci], stats, ranking);
          else all = false;
        }
        if (sum > best) best = sum;
        if (all) hit = true;
      }
      total += best;
      if (hit) {
        matched++;
        if (evidence[u]) held++;
      }
    }
    if (onlyAll && matched !== U && !exact && !c.hasOr) continue;
    if (fb) {
      let e = 0;
      for (let f = 0; f < fb.terms.length; f++) {
        const i = L + f;
        if (tf[i] > 0)
          e +=
            fb.terms[f].weight *
            idfs[i] *
            saturate(scan.body[row + i], scan.title[row + i], tw, scan.lengths[ci], stats, ranking);
      }
      expansion[ci] = (1 - fb.weight) * e;
      total = (fb.weight * total) / Math.max(1, U) + expansion[ci];
    }
    score[ci] = total;
    matchedUnits[ci] = matched;
    holdsAll[ci] = held === unitsWithEvidence ? 1 : 0;
    keep[ci] = 1;
  }
  const candidates: number[] = [];
  for (let ci = 0; ci < C; ci++) if (keep[ci]) candidates.push(ci);
  const byIndex = (a: number, b: number) => score[b] - score[a] || scan.notes[a] - scan.notes[b];
  const rowOf = (ci: number): Scored => {
    const t = new Array<number>(L);
    const body = new Array<number>(L);
    const title = new Array<number>(L);
    const inTitle = new Array<boolean>(L);
    for (let i = 0; i < L; i++) {
      body[i] = scan.body[ci * S + i];
      title[i] = scan.title[ci * S + i];
      t[i] = body[i] + tw * title[i];
      inTitle[i] = title[i] > 0;
    }
    const per = unitScores(units as readonly UnitLexemes[], idfs, body, title, tw, scan.lengths[ci], stats, ranking);
    const hits = units.map((u) => u.perConfig.some((slotsOf) => slotsOf.length > 0 && slotsOf.every((x) => t[x] > 0)));
    return {
      id: scan.notes[ci],
      exact: exactIds.has(scan.notes[ci]),
      phrase: false,
      score: score[ci],
      unitScores: per,
      hits,
      match: matchedUnits[ci] === U ? 'all' : 'any',
      tf: t,
      inTitle,
      ...(fb ? { expansion: expansion[ci] } : {}),
      ...(near[ci] ? { proximity: near[ci] } : {}),
    };
  };
  const chosen = new Map<number, Scored>();
  const materialise = (list: number[]) => list.map((ci) => chosen.get(ci) ?? chosen.set(ci, rowOf(ci)).get(ci)!);
  const boost = (ci: number, by: number) => {
    score[ci] += by;
    near[ci] = by;
    const s = chosen.get(ci);
    if (s) {
      s.score = score[ci];
      s.proximity = by;
    }
  };
  return { scan, candidates, byIndex, materialise, holdsAll, matchedUnits, boost };
}
