// VectorSearch: nearest notes by their best chunk. One interface, two strategies (exact scan here, HNSW in
// vector-search-hnsw.ts), chosen per engine by measurement (README, Search → Operations → Vectors).
// Callers never branch on which one they have.
import { sql, type RawBuilder } from 'kysely';
import type { Database } from '../../../src/sdk/index.js';
import { filterSql, hasFilters, type SearchFilters } from '../filters.js';
import type { NearestNote } from './types.js';

export interface VectorSearch {
  readonly strategy: 'exact' | 'hnsw';
  nearest(vaultId: number, vector: number[] | { noteId: number }, k: number, filters: SearchFilters): Promise<NearestNote[]>;
}

export function toVectorLiteral(v: readonly number[]): string {
  return `[${v.map((x) => (Number.isFinite(x) ? x : 0)).join(',')}]`;
}

/**
 * Chunks ranked per note: the best chunk of a note is its first one in chunk order, so the first k
 * distinct notes among the top chunks are the top k notes. The first try takes this many chunks per
 * wanted note; a try that fills its limit with fewer than k notes asks again for four times as many.
 */
const CHUNKS_PER_NOTE_FIRST_TRY = 4;
const MIN_CANDIDATES = 40;

export interface ChunkRanking {
  /** The ORDER BY expression over chunk alias `c` and the query vector expression `(SELECT v FROM q)`. */
  readonly order: RawBuilder<unknown>;
  /** Runs inside the query's transaction before it (SET LOCAL of the strategy's parameters). */
  readonly prepare?: (trx: Database) => Promise<void>;
}

export interface BestRow {
  note_id: string;
  path: string;
  title: string;
  section_ordinal: number;
  heading_path: string;
  preview: string;
  stale: boolean;
  truncated: boolean | null;
  dist: number;
  candidates: number;
}

/**
 * The query behind nearestByChunks: the top `limit` candidate chunks (joined to `notes` only when a
 * filter needs it), then one row per note (its best chunk by exact distance) with its note row, top k.
 * Exported so benchmarks and tests can EXPLAIN exactly what runs.
 */
export function chunkQuery(ranking: ChunkRanking, vaultId: number, target: number[] | { noteId: number }, k: number, filters: SearchFilters, limit: number): RawBuilder<BestRow> {
  const isNote = !Array.isArray(target);
  const vec = isNote
    ? sql`(SELECT avg(embedding) FROM search_chunks WHERE note_id = ${target.noteId})`
    : sql`${toVectorLiteral(target)}::vector`;
  const exclude = isNote ? sql` AND c.note_id <> ${target.noteId}` : sql``;
  const joinNotes = hasFilters(filters) ? sql`JOIN notes n ON n.id = c.note_id` : sql``;
  return sql<BestRow>`
    WITH q AS MATERIALIZED (SELECT ${vec} AS v),
    cand AS MATERIALIZED (
      SELECT c.note_id, c.section_ordinal, c.heading_path, c.preview, c.content_hash, c.embedding <=> (SELECT v FROM q) AS dist
      FROM search_chunks c ${joinNotes}
      WHERE c.vault_id = ${vaultId} AND (SELECT v FROM q) IS NOT NULL ${exclude} ${filterSql(filters)}
      ORDER BY ${ranking.order} LIMIT ${limit}
    )
    SELECT best.*, (SELECT count(*) FROM cand)::int AS candidates FROM (
      SELECT DISTINCT ON (cand.note_id) cand.note_id, n.path, n.title, cand.section_ordinal, cand.heading_path, cand.preview,
             (cand.content_hash <> n.content_hash) AS stale, e.truncated, cand.dist
      FROM cand JOIN notes n ON n.id = cand.note_id LEFT JOIN search_embedded_notes e ON e.note_id = cand.note_id
      ORDER BY cand.note_id, cand.dist
    ) best ORDER BY dist, note_id LIMIT ${k}`;
}

/** The first candidate limit for k notes. */
export function firstCandidateLimit(k: number, maxChunksPerNote: number): number {
  return Math.min(k * Math.max(1, maxChunksPerNote), Math.max(k * CHUNKS_PER_NOTE_FIRST_TRY, MIN_CANDIDATES));
}

/**
 * Nearest notes from a chunk ranking (chunkQuery). `maxChunksPerNote` bounds the retries: that many
 * chunks per wanted note always hold k distinct notes.
 */
export async function nearestByChunks(
  db: Database,
  ranking: ChunkRanking,
  vaultId: number,
  target: number[] | { noteId: number },
  k: number,
  filters: SearchFilters,
  maxChunksPerNote: number,
): Promise<NearestNote[]> {
  if (k <= 0) return [];
  const most = k * Math.max(1, maxChunksPerNote);
  let limit = firstCandidateLimit(k, maxChunksPerNote);
  for (;;) {
    const query = chunkQuery(ranking, vaultId, target, k, filters, limit);
    const run = async (trx: Database) => {
      await ranking.prepare?.(trx);
      return query.execute(trx);
    };
    const r = ranking.prepare ? await db.transaction().execute(run) : await run(db);
    const filled = (r.rows[0]?.candidates ?? 0) >= limit;
    if (r.rows.length >= k || !filled || limit >= most) return r.rows.map(toNearest);
    limit = Math.min(most, limit * 4);
  }
}

function toNearest(x: BestRow): NearestNote {
  return {
    noteId: Number(x.note_id),
    path: x.path,
    title: x.title,
    similarity: 1 - Number(x.dist),
    sectionOrdinal: x.section_ordinal,
    headingPath: x.heading_path,
    preview: x.stale ? null : x.preview,
    stale: x.stale,
    truncated: x.truncated ?? false,
  };
}

/** Exact scan: every chunk of the vault (or of the filtered notes) ranked by cosine distance. */
export function exactVectorSearch(db: Database, maxChunksPerNote: number): VectorSearch {
  const ranking: ChunkRanking = { order: sql`dist, c.note_id` };
  return {
    strategy: 'exact',
    nearest: (vaultId, target, k, filters) => nearestByChunks(db, ranking, vaultId, target, k, filters, maxChunksPerNote),
  };
}
