// The HNSW strategy for server Postgres (an expression index on halfvec, iterative scans for filters), the
// per-engine choice between it and the exact scan, and the index's upkeep at service start.
// Never interpolates anything but a validated integer into SQL.
import { sql } from 'kysely';
import type { Database, Logger } from '../../../src/sdk/index.js';
import { exactVectorSearch, nearestByChunks, type ChunkRanking, type VectorSearch } from './vector-search.js';

/** pgvector's HNSW limit for halfvec. */
export const HNSW_MAX_DIMS = 4000;
/** The first pgvector release with `hnsw.iterative_scan`; without it a selective filter returns too few rows. */
export const HNSW_MIN_PGVECTOR = '0.8.0';
const INDEX_PREFIX = 'search_chunks_hnsw_';

export type VectorIndexSetting = 'auto' | 'exact' | 'hnsw';

export type VectorIndexChoice =
  | { readonly strategy: 'exact' | 'hnsw'; readonly reason: string }
  | { readonly refuse: string };

/** Compares dotted numeric versions (`0.8.0` < `0.10.1`); missing parts count as 0. */
export function versionAtLeast(version: string, floor: string): boolean {
  const a = version.split(/[.-]/).map((x) => Number.parseInt(x, 10) || 0);
  const b = floor.split('.').map((x) => Number.parseInt(x, 10) || 0);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  }
  return true;
}

export function validHnswDims(dims: number): boolean {
  return Number.isInteger(dims) && dims >= 1 && dims <= HNSW_MAX_DIMS;
}

/**
 * Which strategy serves this engine. `auto`: HNSW on server Postgres with pgvector ≥ 0.8, else exact (on
 * PGlite an HNSW index slows every chunk write: README, Search → Operations → Vectors). An explicit
 * `hnsw` that cannot work is refused rather than quietly downgraded.
 */
export function chooseVectorIndex(setting: VectorIndexSetting, engine: 'pglite' | 'postgres', pgvector: string | null, dims: number): VectorIndexChoice {
  if (setting === 'exact') return { strategy: 'exact', reason: 'search.vectorIndex is exact' };
  const problem =
    engine === 'pglite'
      ? 'the database is embedded PGlite, where an HNSW index makes each chunk write 3.7× slower or more (measured) on the one connection every tool call shares'
      : pgvector === null
        ? 'pgvector is not installed'
        : !versionAtLeast(pgvector, HNSW_MIN_PGVECTOR)
          ? `pgvector ${pgvector} is older than ${HNSW_MIN_PGVECTOR} and lacks hnsw.iterative_scan (a selective filter would return too few rows); run ALTER EXTENSION vector UPDATE after upgrading pgvector`
          : !validHnswDims(dims)
            ? `embedding.dimensions ${dims} is outside the 1–${HNSW_MAX_DIMS} that pgvector can index as halfvec`
            : undefined;
  if (!problem) return { strategy: 'hnsw', reason: `postgres with pgvector ${pgvector}` };
  if (setting === 'hnsw') return { refuse: `search.vectorIndex is hnsw, but ${problem}; set search.vectorIndex to auto or exact` };
  return { strategy: 'exact', reason: problem };
}

/** The installed pgvector version, or null. */
export async function pgvectorVersion(db: Database): Promise<string | null> {
  const r = await sql<{ v: string }>`SELECT extversion AS v FROM pg_extension WHERE extname = 'vector'`.execute(db);
  return r.rows[0]?.v ?? null;
}

export function hnswIndexName(dims: number): string {
  if (!validHnswDims(dims)) throw new Error(`no HNSW index for ${dims} dimensions`);
  return `${INDEX_PREFIX}${dims}`;
}

/**
 * Make the HNSW index set match the strategy: drop ours for other dimensions (a stale one would reject
 * every insert of the new size) or when the strategy is exact; create the one for `dims` when HNSW.
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
  await sql`CREATE INDEX IF NOT EXISTS ${sql.id(want)} ON search_chunks USING hnsw ((embedding::halfvec(${sql.raw(String(dims))})) halfvec_cosine_ops)`.execute(db);
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
      await sql`SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', ${ef}, true)`.execute(trx);
    },
  };
}

export function hnswVectorSearch(db: Database, o: HnswOptions): VectorSearch {
  const ranking = hnswRanking(o.dims, o.efSearch);
  return {
    strategy: 'hnsw',
    nearest: (vaultId, target, k, filters) => nearestByChunks(db, ranking, vaultId, target, k, filters, o.maxChunksPerNote),
  };
}

/** The strategy object for a choice (exact when semantic search is unavailable anyway). */
export function vectorSearchFor(db: Database, strategy: 'exact' | 'hnsw', o: HnswOptions): VectorSearch {
  return strategy === 'hnsw' ? hnswVectorSearch(db, o) : exactVectorSearch(db, o.maxChunksPerNote);
}
