// Pseudo-relevance feedback (RM3, Lavrenko & Croft's relevance model interpolated with the query, as Anserini
// ships it): the first ranking's best notes are taken as relevant, the terms they share most (each note's term
// distribution weighted by its score) become an expansion query, and every note is scored again by the query's
// BM25 and the expansion's, mixed. It answers a question worded differently from its note, as long as the first
// ranking put that note's neighbours near the top. Bounded: `docs` vectors are read by primary key, `terms`
// expansion terms scanned. Only the model and the gate live here; the memory ranker (search.ts) applies them.
import { sql } from 'kysely';
import type { Database } from '../../../src/sdk/index.js';
import { isSingleCjk } from './cjk.js';
import { parseTsvector, type ParsedVector } from './memory-index.js';
import type { ParsedQuery, QueryPlan } from './query-parse.js';

export interface FeedbackOptions {
  /** Notes of the first ranking taken as relevant (0: no feedback). */
  readonly feedbackDocs: number;
  /** Expansion terms kept. */
  readonly feedbackTerms: number;
  /** The original query's share of the final score (RM3's λ; the expansion gets the rest). */
  readonly feedbackWeight: number;
  /** Units of evidence a query needs for feedback: a question, not a title or a one-word lookup. */
  readonly feedbackMinTerms: number;
}

export interface ExpansionTerm {
  readonly lexeme: string;
  /** The relevance model's probability, renormalised over the terms kept (they sum to 1). */
  readonly weight: number;
}

/** A lexeme worth expanding with: a word of 2–20 characters, not a bare number (the parser keeps those too). */
function expandable(lexeme: string): boolean {
  const n = [...lexeme].length;
  if (n < 2 || n > 20 || isSingleCjk(lexeme)) return false;
  if (/^[\p{N}._-]+$/u.test(lexeme)) return false;
  return /^[\p{L}\p{N}_-]+$/u.test(lexeme);
}

/**
 * Whether a query gets feedback: at least `feedbackMinTerms` units, no OR, no quoted phrase, and it is not a lookup
 * the first ranking already answered (an exact title, or a note holding the whole query as a phrase).
 */
export function feedbackApplies(
  plan: QueryPlan,
  parsed: ParsedQuery,
  o: FeedbackOptions,
  lookupAnswered: boolean,
): boolean {
  return (
    o.feedbackDocs > 0 &&
    o.feedbackTerms > 0 &&
    o.feedbackWeight < 1 &&
    plan.units.length >= Math.max(1, o.feedbackMinTerms) &&
    !plan.hasOr &&
    !plan.negated.length &&
    !parsed.units.some((u) => u.startsWith('"')) &&
    !lookupAnswered
  );
}

/**
 * The relevance model over the feedback notes: P(w|R) ∝ Σ_d score(d) · tf(w,d) / |d|, over expandable lexemes,
 * the `terms` most probable kept and renormalised. Each note's vector counts title and body occurrences alike.
 */
export function relevanceModel(
  notes: ReadonlyArray<{ readonly score: number; readonly vector: ParsedVector }>,
  terms: number,
): ExpansionTerm[] {
  const p = new Map<string, number>();
  for (const { score, vector } of notes) {
    if (!(score > 0)) continue;
    let len = 0;
    const counts = vector.packed.map((x) => (x >>> 16) + (x & 0xffff));
    for (const c of counts) len += c;
    if (!len) continue;
    vector.lexemes.forEach((lexeme, i) => {
      if (!expandable(lexeme)) return;
      p.set(lexeme, (p.get(lexeme) ?? 0) + (score * counts[i]) / len);
    });
  }
  const kept = [...p]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, terms)
    .filter(([, w]) => w > 0);
  const total = kept.reduce((a, [, w]) => a + w, 0);
  return total > 0 ? kept.map(([lexeme, w]) => ({ lexeme, weight: w / total })) : [];
}

/** The stored vectors of the feedback notes, by primary key (one statement). */
export async function readVectors(db: Database, noteIds: readonly number[]): Promise<Map<number, ParsedVector>> {
  if (!noteIds.length) return new Map();
  const r = await sql<{
    note_id: string;
    tsv: string;
  }>`SELECT note_id, tsv::text AS tsv FROM search_keyword WHERE note_id = ANY(${noteIds}::bigint[])`.execute(db);
  return new Map(r.rows.map((row) => [Number(row.note_id), parseTsvector(row.tsv)]));
}
