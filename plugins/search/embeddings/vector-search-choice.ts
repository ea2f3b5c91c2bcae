// Which VectorSearch strategy serves this engine (search.vectorIndex), and the strategy object for a choice.
// Pure except pgvectorVersion; an explicit strategy that cannot work is refused, never quietly downgraded.
import { sql } from 'kysely';
import type { Database } from '../../../src/sdk/index.js';
import { exactVectorSearch, type VectorSearch, type VectorStrategy } from './vector-search.js';
import { HNSW_MAX_DIMS, HNSW_MIN_PGVECTOR, hnswVectorSearch, validHnswDims } from './vector-search-hnsw.js';
import { QUANTIZED_MIN_PGVECTOR, quantizedVectorSearch } from './vector-search-quantized.js';

export type VectorIndexSetting = 'auto' | VectorStrategy;

export type VectorIndexChoice =
  | { readonly strategy: VectorStrategy; readonly reason: string }
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

const UPGRADE = 'run ALTER EXTENSION vector UPDATE after upgrading pgvector';

function hnswProblem(engine: 'pglite' | 'postgres', pgvector: string | null, dims: number): string | undefined {
  if (engine === 'pglite')
    return 'the database is embedded PGlite, where an HNSW index makes each chunk write 3.5× slower (measured) and its build blocks the one connection every tool call shares';
  if (pgvector === null) return 'pgvector is not installed';
  if (!versionAtLeast(pgvector, HNSW_MIN_PGVECTOR))
    return `pgvector ${pgvector} is older than ${HNSW_MIN_PGVECTOR} and lacks hnsw.iterative_scan (a selective filter would return too few rows); ${UPGRADE}`;
  if (!validHnswDims(dims))
    return `embedding.dimensions ${dims} is outside the 1–${HNSW_MAX_DIMS} that pgvector can index as halfvec`;
  return undefined;
}

function quantizedProblem(pgvector: string | null): string | undefined {
  if (pgvector === null) return 'pgvector is not installed';
  if (!versionAtLeast(pgvector, QUANTIZED_MIN_PGVECTOR))
    return `pgvector ${pgvector} is older than ${QUANTIZED_MIN_PGVECTOR} and lacks binary_quantize; ${UPGRADE}`;
  return undefined;
}

/**
 * Which strategy serves this engine. `auto`: HNSW on server Postgres with pgvector ≥ 0.8 (index walks,
 * sublinear); else the binary-quantized scan where pgvector has binary_quantize (embedded PGlite: no index
 * to slow chunk writes, exact 130 → 17.7 ms p50 at 30k chunks: docs/families.md, Search → Operations → Vectors); else exact.
 */
export function chooseVectorIndex(
  setting: VectorIndexSetting,
  engine: 'pglite' | 'postgres',
  pgvector: string | null,
  dims: number,
): VectorIndexChoice {
  if (setting === 'exact') return { strategy: 'exact', reason: 'search.vectorIndex is exact' };
  const noHnsw = hnswProblem(engine, pgvector, dims);
  const noQuantized = quantizedProblem(pgvector);
  if (setting === 'hnsw') {
    return noHnsw
      ? { refuse: `search.vectorIndex is hnsw, but ${noHnsw}; set search.vectorIndex to auto or exact` }
      : { strategy: 'hnsw', reason: `postgres with pgvector ${pgvector}` };
  }
  if (setting === 'quantized') {
    return noQuantized
      ? { refuse: `search.vectorIndex is quantized, but ${noQuantized}; set search.vectorIndex to auto or exact` }
      : { strategy: 'quantized', reason: 'search.vectorIndex is quantized' };
  }
  if (!noHnsw) return { strategy: 'hnsw', reason: `postgres with pgvector ${pgvector}` };
  if (!noQuantized) return { strategy: 'quantized', reason: `no HNSW: ${noHnsw}` };
  return { strategy: 'exact', reason: `no HNSW: ${noHnsw}; not quantized: ${noQuantized}` };
}

/** The installed pgvector version, or null. */
export async function pgvectorVersion(db: Database): Promise<string | null> {
  const r = await sql<{ v: string }>`SELECT extversion AS v FROM pg_extension WHERE extname = 'vector'`.execute(db);
  return r.rows[0]?.v ?? null;
}

export interface VectorSearchOptions {
  readonly dims: number;
  readonly maxChunksPerNote: number;
  /** search.hnswEfSearch */
  readonly efSearch: number;
  /** search.quantizedCandidates */
  readonly quantizedCandidates: number;
  /** search.quantizedExactBelow */
  readonly quantizedExactBelow: number;
}

/** The strategy object for a choice (exact when semantic search is unavailable anyway). */
export function vectorSearchFor(db: Database, strategy: VectorStrategy, o: VectorSearchOptions): VectorSearch {
  if (strategy === 'hnsw') return hnswVectorSearch(db, o);
  if (strategy === 'quantized')
    return quantizedVectorSearch(db, {
      candidatesPerNote: o.quantizedCandidates,
      exactBelow: o.quantizedExactBelow,
      maxChunksPerNote: o.maxChunksPerNote,
    });
  return exactVectorSearch(db, o.maxChunksPerNote);
}
