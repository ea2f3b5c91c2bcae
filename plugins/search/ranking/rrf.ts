// Reciprocal rank fusion as a pure function: each arm's ranked ids in, fused rows out with each
// arm's rank and its 1/(k+rank) term. Ties break on the better best-rank, then on the id.

export interface FusedRow<Id> {
  readonly id: Id;
  readonly score: number;
  readonly ranks: Readonly<Record<string, number>>;
  readonly terms: Readonly<Record<string, number>>;
}

export function reciprocalRankFusion<Id extends string | number>(
  arms: Readonly<Record<string, readonly Id[]>>,
  k: number,
): FusedRow<Id>[] {
  const rows = new Map<
    Id,
    { ranks: Record<string, number>; terms: Record<string, number>; score: number; best: number }
  >();
  for (const [arm, ids] of Object.entries(arms)) {
    ids.forEach((id, i) => {
      const rank = i + 1;
      const term = 1 / (k + rank);
      const row = rows.get(id) ?? { ranks: {}, terms: {}, score: 0, best: Number.POSITIVE_INFINITY };
      if (row.ranks[arm] !== undefined) return;
      row.ranks[arm] = rank;
      row.terms[arm] = term;
      row.score += term;
      row.best = Math.min(row.best, rank);
      rows.set(id, row);
    });
  }
  return [...rows.entries()]
    .sort(([ia, a], [ib, b]) => b.score - a.score || a.best - b.best || (ia < ib ? -1 : ia > ib ? 1 : 0))
    .map(([id, r]) => ({ id, score: r.score, ranks: r.ranks, terms: r.terms }));
}

/** `confidence: low` when no keyword note matched every term and the best similarity is under the threshold. */
export function confidenceOf(
  threshold: number,
  bestSimilarity: number | undefined,
  keywordFullMatches: number,
): 'ok' | 'low' {
  if (threshold <= 0) return 'ok';
  if (keywordFullMatches > 0) return 'ok';
  return bestSimilarity !== undefined && bestSimilarity >= threshold ? 'ok' : 'low';
}
