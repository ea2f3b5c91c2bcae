// BM25 scoring of keyword candidates from their per-lexeme term frequencies (title hits counted `titleWeight`
// times, the BM25F way, then saturated and length-normalised with the body) and the vault's statistics.
// Pure arithmetic: no SQL. Which lexemes to ask about and which notes to score is the planner's business.

export interface Bm25Params {
  readonly k1: number;
  readonly b: number;
}

export interface VaultStats {
  readonly docs: number;
  readonly avgLength: number;
}

/** One unit of the query as lexemes: per text search config, the lexemes its text became there. */
export interface UnitLexemes {
  readonly perConfig: ReadonlyArray<readonly number[]>;
}

/** Robertson–Spärck Jones IDF, floored at zero by the +1 (a term in every note weighs almost nothing). */
export function idf(df: number, docs: number): number {
  const n = Math.max(docs, df, 1);
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/** The saturated, length-normalised frequency part of BM25 for one lexeme in one note. */
export function saturate(tf: number, length: number, stats: VaultStats, p: Bm25Params): number {
  if (tf <= 0) return 0;
  const norm = stats.avgLength > 0 ? 1 - p.b + (p.b * length) / stats.avgLength : 1;
  return (tf * (p.k1 + 1)) / (tf + p.k1 * norm);
}

/**
 * Each unit's score in one note: the best config's sum over its lexemes (so `english` and `simple`
 * forms of one word are not counted twice, while a phrase or a CJK word adds up its parts).
 */
export function unitScores(
  units: readonly UnitLexemes[],
  weights: readonly number[],
  tf: readonly number[],
  length: number,
  stats: VaultStats,
  p: Bm25Params,
): number[] {
  return units.map((u) => {
    let best = 0;
    for (const lexemes of u.perConfig) {
      let s = 0;
      for (const i of lexemes) s += weights[i] * saturate(tf[i] ?? 0, length, stats, p);
      if (s > best) best = s;
    }
    return best;
  });
}
