// VectorSearch: nearest notes by their best chunk. One interface, three strategies (exact scan here, HNSW in
// vector-search-hnsw.ts, binary-quantized scan in vector-search-quantized.ts), chosen per engine by
// measurement (vector-search-choice.ts; docs/families.md, Search → Operations → Vectors). Callers never branch on which.
import { sql, type RawBuilder } from 'kysely';
import type { Database } from '../../../src/sdk/index.js';
import { filterSql, hasFilters, type SearchFilters } from '../filters.js';
import type { NearestNote } from './types.js';

export type VectorStrategy = 'exact' | 'hnsw' | 'quantized';

export type VectorTarget = number[] | { noteId: number };

export interface VectorSearch {
  readonly strategy: VectorStrategy;
  nearest(vaultId: number, vector: VectorTarget, k: number, filters: SearchFilters): Promise<NearestNote[]>;
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

/** The query vector: the given one, or the mean of a note's chunk vectors ("similar notes"). */
export function queryVector(target: VectorTarget): RawBuilder<unknown> {
  return Array.isArray(target)
    ? sql`${toVectorLiteral(target)}::vector`
    : sql`(SELECT avg(embedding) FROM search_chunks WHERE note_id = ${target.noteId})`;
}

/** `AND <alias>.note_id <> id` when the target is a note (it is not its own neighbour), else nothing. */
export function excludeTargetNote(target: VectorTarget, alias: 'b' | 'c'): RawBuilder<unknown> {
  return Array.isArray(target) ? sql`` : sql` AND ${sql.ref(`${alias}.note_id`)} <> ${target.noteId}`;
}

/**
 * The tail every strategy shares, over a CTE `cand` of candidate chunks (note_id, section_ordinal,
 * heading_path, preview, content_hash, dist): one row per note (its best chunk; of equally near ones the
 * earliest section, so strategies agree), top k, and only then their note rows (joining every candidate's
 * note row cost 3 ms of 19 at 400 candidates, PGlite).
 */
export function bestPerNote(k: number): RawBuilder<BestRow> {
  return sql<BestRow>`
    SELECT top.note_id, n.path, n.title, top.section_ordinal, top.heading_path, top.preview,
           (top.content_hash <> n.content_hash) AS stale, e.truncated, top.dist, (SELECT count(*) FROM cand)::int AS candidates
    FROM (
      SELECT * FROM (
        SELECT DISTINCT ON (cand.note_id) cand.* FROM cand ORDER BY cand.note_id, cand.dist, cand.section_ordinal
      ) best ORDER BY dist, note_id LIMIT ${k}
    ) top JOIN notes n ON n.id = top.note_id LEFT JOIN search_embedded_notes e ON e.note_id = top.note_id
    ORDER BY top.dist, top.note_id`;
}

/**
 * The query behind nearestByChunks: the top `limit` candidate chunks (joined to `notes` only when a
 * filter needs it), then one row per note (its best chunk by exact distance) with its note row, top k.
 * Exported so benchmarks and tests can EXPLAIN exactly what runs.
 */
export function chunkQuery(
  ranking: ChunkRanking,
  vaultId: number,
  target: VectorTarget,
  k: number,
  filters: SearchFilters,
  limit: number,
): RawBuilder<BestRow> {
  const joinNotes = hasFilters(filters) ? sql`JOIN notes n ON n.id = c.note_id` : sql``;
  return sql<BestRow>`
    WITH q AS MATERIALIZED (SELECT ${queryVector(target)} AS v),
    cand AS MATERIALIZED (
      SELECT c.note_id, c.section_ordinal, c.heading_path, c.preview, c.content_hash, c.embedding <=> (SELECT v FROM q) AS dist
      FROM search_chunks c ${joinNotes}
      WHERE c.vault_id = ${vaultId} AND (SELECT v FROM q) IS NOT NULL ${excludeTargetNote(target, 'c')} ${filterSql(filters)}
      ORDER BY ${ranking.order} LIMIT ${limit}
    )
    ${bestPerNote(k)}`;
}

/** The first candidate limit for k notes. */
export function firstCandidateLimit(k: number, maxChunksPerNote: number): number {
  return Math.min(k * Math.max(1, maxChunksPerNote), Math.max(k * CHUNKS_PER_NOTE_FIRST_TRY, MIN_CANDIDATES));
}

/**
 * Runs `query(limit)` (a chunkQuery-shaped query) from `first` candidates, four times as many while a try
 * filled its limit with fewer than k notes, up to k × maxChunksPerNote (that many chunks always hold k
 * distinct notes). `prepare` runs in the query's transaction first.
 */
export async function nearestWithGrowingLimit(
  db: Database,
  query: (limit: number) => RawBuilder<BestRow>,
  first: number,
  k: number,
  maxChunksPerNote: number,
  prepare?: (trx: Database) => Promise<void>,
): Promise<NearestNote[]> {
  if (k <= 0) return [];
  const most = k * Math.max(1, maxChunksPerNote);
  let limit = first;
  for (;;) {
    const q = query(limit);
    const run = async (trx: Database) => {
      await prepare?.(trx);
      return q.execute(trx);
    };
    const r = prepare ? await db.transaction().execute(run) : await run(db);
    const filled = (r.rows[0]?.candidates ?? 0) >= limit;
    if (r.rows.length >= k || !filled || limit >= most) return r.rows.map(toNearest);
    limit = Math.min(most, limit * 4);
  }
}

/** Nearest notes from a chunk ranking (chunkQuery), with growing limits (nearestWithGrowingLimit). */
export function nearestByChunks(
  db: Database,
  ranking: ChunkRanking,
  vaultId: number,
  target: VectorTarget,
  k: number,
  filters: SearchFilters,
  maxChunksPerNote: number,
): Promise<NearestNote[]> {
  const query = (limit: number) => chunkQuery(ranking, vaultId, target, k, filters, limit);
  return nearestWithGrowingLimit(
    db,
    query,
    firstCandidateLimit(k, maxChunksPerNote),
    k,
    maxChunksPerNote,
    ranking.prepare,
  );
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
    nearest: (vaultId, target, k, filters) =>
      nearestByChunks(db, ranking, vaultId, target, k, filters, maxChunksPerNote),
  };
}
