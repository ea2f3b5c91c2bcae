// Proximity of query terms (Tao & Zhai, SIGIR 2007): a note where two of the query's units sit close together
// answers it better than one where they lie far apart. The measure is MinDist, the smallest distance in tokens
// between occurrences of two different matched units, and the bonus log(α + e^−MinDist) − log α is added to the
// BM25 score: at most log((1 + α) / α) for adjacent units, about 0 from ten tokens apart, 0 when one unit
// matched. Applied to the first ranking's best notes only (their positions read by primary key, one statement);
// the rest keep their score, which is what a note with no close pair gets. Pure arithmetic here plus the read.
import { sql } from 'kysely';
import type { Database } from '../../../src/sdk/index.js';

/** Notes of the first ranking whose positions are read: a page of 20 and what may climb into it. */
export const PROXIMITY_DOCS = 30;

/** Smallest distance between a position of one unit and a position of another (Infinity with fewer than two units). */
export function minDistance(units: ReadonlyArray<readonly number[]>): number {
  const marks: Array<[number, number]> = [];
  units.forEach((positions, u) => {
    for (const p of positions) marks.push([p, u]);
  });
  marks.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let best = Number.POSITIVE_INFINITY;
  for (let i = 1; i < marks.length; i++)
    if (marks[i][1] !== marks[i - 1][1]) best = Math.min(best, marks[i][0] - marks[i - 1][0]);
  return best;
}

/** Tao & Zhai's π(Q,D) = log(α + e^−δ), shifted so that a note with no close pair gets 0. */
export function proximityBonus(distance: number, alpha: number): number {
  if (!(alpha > 0) || !Number.isFinite(distance)) return 0;
  return Math.log(alpha + Math.exp(-distance)) - Math.log(alpha);
}

/**
 * Positions of the given lexemes in each note's stored vector (title words first, then the body), by primary key.
 * Map: note → lexeme → positions.
 */
export async function readPositions(
  db: Database,
  noteIds: readonly number[],
  lexemes: readonly string[],
): Promise<Map<number, Map<string, number[]>>> {
  const out = new Map<number, Map<string, number[]>>();
  if (!noteIds.length || !lexemes.length) return out;
  const r = await sql<{
    note_id: string;
    lexeme: string;
    positions: number[] | null;
  }>`SELECT k.note_id, u.lexeme, u.positions FROM search_keyword k CROSS JOIN LATERAL unnest(k.tsv) u
     WHERE k.note_id = ANY(${noteIds}::bigint[]) AND u.lexeme = ANY(${lexemes}::text[])`.execute(db);
  for (const row of r.rows) {
    const id = Number(row.note_id);
    let m = out.get(id);
    if (!m) out.set(id, (m = new Map()));
    m.set(row.lexeme, (row.positions ?? []).map(Number));
  }
  return out;
}
