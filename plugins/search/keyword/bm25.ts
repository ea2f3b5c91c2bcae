// BM25F scoring of keyword candidates from their per-lexeme term frequencies, title and body apart (the body's
// count length-normalised, the title's counted `titleWeight` times as it stands, then saturated once) and the
// vault's statistics. Pure arithmetic: no SQL. Which lexemes to ask about and which notes to score is the planner's business.

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

/**
 * The saturated frequency part of BM25F for one lexeme in one note (Robertson, Zaragoza & Taylor 2004): each field
 * normalised by its own length before the fields are added and saturated once. The body is normalised by the note's
 * length (b); a title is a few words in every note, so its `titleWeight`-fold count is taken as it stands. Normalising
 * the title by the body's length, as before, made a title match in a long note worth less the higher b was, which
 * is what had held b below the textbook 0.75 (docs/performance.md).
 */
export function saturate(
  body: number,
  title: number,
  titleWeight: number,
  length: number,
  stats: VaultStats,
  p: Bm25Params,
): number {
  const norm = stats.avgLength > 0 ? 1 - p.b + (p.b * length) / stats.avgLength : 1;
  const f = body / norm + titleWeight * title;
  return f > 0 ? (f * (p.k1 + 1)) / (f + p.k1) : 0;
}

/**
 * Each unit's score in one note: the best config's sum over its lexemes (so `english` and `simple`
 * forms of one word are not counted twice, while a phrase or a CJK word adds up its parts).
 */
export function unitScores(
  units: readonly UnitLexemes[],
  weights: readonly number[],
  body: readonly number[],
  title: readonly number[],
  titleWeight: number,
  length: number,
  stats: VaultStats,
  p: Bm25Params,
): number[] {
  return units.map((u) => {
    let best = 0;
    for (const lexemes of u.perConfig) {
      let s = 0;
      for (const i of lexemes) s += weights[i] * saturate(body[i] ?? 0, title[i] ?? 0, titleWeight, length, stats, p);
      if (s > best) best = s;
    }
    return best;
  });
}
