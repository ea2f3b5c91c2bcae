// The HNSW strategy for server Postgres (an expression index on halfvec, iterative scans for filters) and
// the index's upkeep at service start. Never interpolates anything but a validated integer into SQL.
import { sql } from 'kysely';
import type { Database, Logger } from '../../../src/sdk/index.js';
import { nearestByChunks, type ChunkRanking, type VectorSearch } from './vector-search.js';

/** pgvector's HNSW limit for halfvec. */
export const HNSW_MAX_DIMS = 4000;
/** The first pgvector release with `hnsw.iterative_scan`; without it a selective filter returns too few rows. */
export const HNSW_MIN_PGVECTOR = '0.8.0';
const INDEX_PREFIX = 'search_chunks_hnsw_';

export function validHnswDims(dims: number): boolean {
  return Number.isInteger(dims) && dims >= 1 && dims <= HNSW_MAX_DIMS;
}

export function hnswIndexName(dims: number): string {
  if (!validHnswDims(dims)) throw new Error(`no HNSW index for ${dims} dimensions`);
  return `${INDEX_PREFIX}${dims}`;
}

/**
 * Make the HNSW index set match the strategy: drop ours for other dimensions (a stale one would reject
 * every insert of the new size) or when the strategy is another; create the one for `dims` when HNSW.
 * Creating it over a large table takes a while and blocks chunk writes meanwhile, so it runs at start.
 */
export async function syncHnswIndex(db: Database, log: Logger, dims: number | null): Promise<void> {
  const want = dims === null ? null : hnswIndexName(dims);
  const have = await sql<{ name: string }>`SELECT indexname AS name FROM pg_indexes
    WHERE tablename = 'search_chunks' AND indexname LIKE ${`${INDEX_PREFIX.replace(/_/g, '\\_')}%`}`.execute(db);
  for (const { name } of have.rows) {
    if (name === want) continue;
    await sql`DROP INDEX IF EXISTS ${sql.id(name)}`.execute(db);
    log.info({ index: name }, 'search: dropped an HNSW index the configuration no longer uses');
  }
  if (!want || have.rows.some((r) => r.name === want)) return;
  const started = Date.now();
  log.info({ index: want }, 'search: building the HNSW index over the stored vectors');
  await sql`CREATE INDEX IF NOT EXISTS ${sql.id(want)} ON search_chunks USING hnsw ((embedding::halfvec(${sql.raw(String(dims))})) halfvec_cosine_ops)`.execute(
    db,
  );
  log.info({ index: want, ms: Date.now() - started }, 'search: HNSW index ready');
}

export interface HnswOptions {
  readonly dims: number;
  readonly efSearch: number;
  readonly maxChunksPerNote: number;
}

/**
 * Approximate nearest chunks through the halfvec HNSW index. Iterative scans (relaxed order) keep the
 * index walking until a filter has let enough rows through; candidates are re-ranked by exact distance.
 */
export function hnswRanking(dims: number, efSearch: number): ChunkRanking {
  if (!validHnswDims(dims)) throw new Error(`no HNSW index for ${dims} dimensions`);
  const d = sql.raw(String(dims));
  const ef = String(Math.trunc(efSearch));
  return {
    order: sql`c.embedding::halfvec(${d}) <=> (SELECT v FROM q)::halfvec(${d})`,
    async prepare(trx) {
      await sql`SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', ${ef}, true)`.execute(
        trx,
      );
    },
  };
}

export function hnswVectorSearch(db: Database, o: HnswOptions): VectorSearch {
  const ranking = hnswRanking(o.dims, o.efSearch);
  return {
    strategy: 'hnsw',
    nearest: (vaultId, target, k, filters) =>
      nearestByChunks(db, ranking, vaultId, target, k, filters, o.maxChunksPerNote),
  };
}
