// The semantic arm's vector part (nearest notes over stored chunk vectors, no embedding call) on embedded
// PGlite and on the server engine (PGlite behind the wire protocol: no native pgvector here): exact, HNSW,
// binary-quantized. Synthetic data: clustered random unit vectors, 10 chunks per note, fixed seed.
// Usage: tsx bench/semantic.ts [chunks=30000] [dims=1024] [rounds=30] [wireHnswChunks=3000] [storage=main|external]
//   [quantizedCandidates=10,20,40] [parts=all|pglite|pglite-quantized]  (pglite: no wire part; pglite-quantized:
//   also no HNSW build and no old-query baseline). Prints `name: value unit`.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import {
  chunkQuery,
  exactVectorSearch,
  firstCandidateLimit,
  nearestByChunks,
  toVectorLiteral,
  type ChunkRanking,
  type VectorSearch,
} from '../plugins/search/embeddings/vector-search.js';
import { hnswRanking, hnswVectorSearch, syncHnswIndex } from '../plugins/search/embeddings/vector-search-hnsw.js';
import {
  quantizedCandidateLimit,
  quantizedQuery,
  quantizedVectorSearch,
  syncChunkBits,
} from '../plugins/search/embeddings/vector-search-quantized.js';
import type { NearestNote } from '../plugins/search/embeddings/types.js';
import { filterSql, type SearchFilters } from '../plugins/search/filters.js';
import { startTestServer, type TestServer } from '../src/host/testing/harness.js';
import { startPgliteWire } from '../src/host/testing/pglite-wire.js';
import type { IndexService } from '../src/sdk/index-service.js';
import type { Database } from '../src/sdk/index.js';

const chunks = Number(process.argv[2] ?? 30000);
const dims = Number(process.argv[3] ?? 1024);
const rounds = Number(process.argv[4] ?? 30);
const wireHnswChunks = Math.min(chunks, Number(process.argv[5] ?? 3000));
const storage = process.argv[6] === 'external' ? 'EXTERNAL' : 'MAIN';
const oversampling = (process.argv[7] ?? '10,20,40')
  .split(',')
  .map(Number)
  .filter((n) => Number.isInteger(n) && n > 0);
const parts = process.argv[8] ?? 'all';
if (!['all', 'pglite', 'pglite-quantized'].includes(parts))
  throw new Error(`parts must be all, pglite or pglite-quantized, not ${parts}`);
const QUANTIZED_DEFAULT = 40; // search.quantizedCandidates default
const EXACT_BELOW_DEFAULT = 2000; // search.quantizedExactBelow default
const CHUNKS_PER_NOTE = 10;
const FOLDERS = 30;
const CENTERS = 200;
const K = 10;
const MAX_CHUNKS = 64; // search.embedding.maxChunksPerNote default
const EF_SEARCH = 100; // search.hnswEfSearch default
const INSERT_SAMPLE_NOTES = 50;
const notes = Math.ceil(chunks / CHUNKS_PER_NOTE);

// Deterministic generator (mulberry32) so every run ranks the same vectors.
let seed = 42;
function rnd(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const gauss = () => Math.sqrt(-2 * Math.log(rnd() + 1e-12)) * Math.cos(2 * Math.PI * rnd());
function unit(v: number[]): number[] {
  const n = Math.sqrt(v.reduce((a, b) => a + b * b, 0)) || 1;
  return v.map((x) => x / n);
}
/** `c` plus Gaussian noise of norm ≈ `noise`, normalised (cosine to `c` ≈ 1/√(1+noise²)). */
const near = (c: number[], noise: number) => unit(c.map((x) => x + (noise * gauss()) / Math.sqrt(dims)));
const literal = (v: number[]) => `[${v.map((x) => x.toFixed(6)).join(',')}]`;
// Topic clusters → notes → chunks, like real embeddings: a note's chunks sit near its note vector, notes
// near their topic. Queries sit near a random note (so its topic's notes are the true neighbours).
const centers = Array.from({ length: CENTERS }, () => unit(Array.from({ length: dims }, gauss)));
const noteVectors = Array.from({ length: notes }, (_, i) => near(centers[i % CENTERS], 0.7));
const chunkVector = (note: number) => near(noteVectors[note % notes], 0.5);
const queries = Array.from({ length: rounds }, () => near(noteVectors[Math.floor(rnd() * notes)], 0.8));

/** ~3,000 small notes in 30 folders plus a 3-note folder for the selective filter; every other note tagged `even` (the broad filter). */
function makeVault(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-bench-semantic-'));
  for (let i = 0; i < notes; i++) {
    const folder = i < 3 ? 'Rare' : `F${String(i % FOLDERS).padStart(2, '0')}`;
    mkdirSync(path.join(dir, folder), { recursive: true });
    const tags = i % 2 === 0 ? '---\ntags: [even]\n---\n' : '';
    writeFileSync(path.join(dir, folder, `note-${i}.md`), `${tags}# Note ${i}\n\nBody of synthetic note ${i}.\n`);
  }
  return dir;
}

function pct(times: number[], p: number): number {
  const s = [...times].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
}

function print(name: string, value: number | string, unit: string): void {
  console.log(
    `${name}: ${typeof value === 'number' ? (Number.isInteger(value) ? value : value.toFixed(value < 10 ? 2 : 1)) : value} ${unit}`,
  );
}

async function start(vault: string, database?: Record<string, unknown>): Promise<TestServer> {
  const server = await startTestServer({
    copyVaultFrom: vault,
    config: {
      ...(database ? { database } : {}),
      families: {
        files: { enabled: false },
        graph: { enabled: false },
        tasks: { enabled: false },
        notes: { enabled: false },
        transfer: { enabled: false },
      },
      search: { embedding: { provider: 'none' } },
    },
  });
  await (server.host.services.named.get('index') as IndexService).whenReady(server.host.vaultHandle.id, 1_800_000);
  return server;
}

/** Insert CHUNKS_PER_NOTE synthetic chunks per note, 10 notes per statement; returns ms. */
async function load(db: Database, vaultId: number, upTo: number): Promise<number> {
  await sql`ALTER TABLE search_chunks ALTER COLUMN embedding SET STORAGE ${sql.raw(storage)}`.execute(db);
  const rows = await sql<{
    id: string;
    content_hash: string;
  }>`SELECT id, content_hash FROM notes WHERE vault_id = ${vaultId} ORDER BY id`.execute(db);
  const started = Date.now();
  const batch = 10;
  for (let i = 0; i < rows.rows.length && i * CHUNKS_PER_NOTE < upTo; i += batch) {
    const group = rows.rows.slice(i, i + batch);
    const values = group.flatMap((n) =>
      Array.from(
        { length: CHUNKS_PER_NOTE },
        (_, o) =>
          sql`(${n.id}, ${vaultId}, ${o}, ${o}, ${`Note/Section ${o}`}, ${'synthetic preview'}, ${n.content_hash}, ${literal(chunkVector(Number(n.id)))}::vector)`,
      ),
    );
    await sql`INSERT INTO search_chunks (note_id, vault_id, ordinal, section_ordinal, heading_path, preview, content_hash, embedding) VALUES ${sql.join(values)}`.execute(
      db,
    );
    await sql`INSERT INTO search_embedded_notes (note_id, vault_id, content_hash, chunk_count, truncated)
      VALUES ${sql.join(group.map((n) => sql`(${n.id}, ${vaultId}, ${n.content_hash}, ${CHUNKS_PER_NOTE}, false)`))}`.execute(
      db,
    );
  }
  const ms = Date.now() - started;
  await sql`ANALYZE search_chunks`.execute(db);
  await sql`ANALYZE notes`.execute(db);
  return ms;
}

/** The exact query the family shipped before (every chunk joined to its note before ranking), for comparison. */
function joinAllExact(db: Database): VectorSearch {
  return {
    strategy: 'exact',
    async nearest(vaultId, target, k, filters) {
      const r = await sql<{ note_id: string; dist: number }>`
        WITH q AS (SELECT ${toVectorLiteral(target as number[])}::vector AS v)
        SELECT * FROM (
          SELECT DISTINCT ON (c.note_id) c.note_id, n.path, n.title, c.section_ordinal, c.heading_path, c.preview,
                 (c.content_hash <> n.content_hash) AS stale, e.truncated, (c.embedding <=> q.v) AS dist
          FROM q, search_chunks c JOIN notes n ON n.id = c.note_id LEFT JOIN search_embedded_notes e ON e.note_id = c.note_id
          WHERE c.vault_id = ${vaultId} AND q.v IS NOT NULL ${filterSql(filters)}
          ORDER BY c.note_id, dist
        ) best ORDER BY dist, note_id LIMIT ${k}`.execute(db);
      return r.rows.map((x) => ({ noteId: Number(x.note_id), similarity: 1 - x.dist }) as NearestNote);
    },
  };
}

/** HNSW over the plain column with vector_cosine_ops (halfvec is 6.5× slower to build in WASM). */
function pgliteRanking(): ChunkRanking {
  const d = sql.raw(String(dims));
  return {
    order: sql`c.embedding::vector(${d}) <=> (SELECT v FROM q)::vector(${d})`,
    async prepare(trx) {
      await sql`SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', ${String(EF_SEARCH)}, true)`.execute(
        trx,
      );
    },
  };
}

function pgliteHnsw(db: Database): VectorSearch {
  const ranking = pgliteRanking();
  return {
    strategy: 'hnsw',
    nearest: (vaultId, target, k, filters) => nearestByChunks(db, ranking, vaultId, target, k, filters, MAX_CHUNKS),
  };
}

const FILTERS: Record<string, SearchFilters> = {
  '': {},
  _filtered: { folder: 'F07' },
  _filtered_rare: { folder: 'Rare' },
  _filtered_half: { tags: ['even'] },
};
const FILTER_NAMES = '(unfiltered,folder,rare,half)';

type Answers = Record<string, Array<Array<{ id: number; similarity: number }>>>;

/** p50/p95 per filter; returns the result notes per query and filter (for recall). */
async function timeStrategy(prefix: string, vs: VectorSearch, vaultId: number): Promise<Answers> {
  const out: Answers = {};
  for (const [suffix, filters] of Object.entries(FILTERS)) {
    await vs.nearest(vaultId, queries[0], K, filters); // warm
    const times: number[] = [];
    const ids: Array<Array<{ id: number; similarity: number }>> = [];
    let rows = 0;
    for (const q of queries) {
      const s = process.hrtime.bigint();
      const r = await vs.nearest(vaultId, q, K, filters);
      times.push(Number(process.hrtime.bigint() - s) / 1e6);
      ids.push(r.map((x) => ({ id: x.noteId, similarity: x.similarity })));
      rows += r.length;
    }
    print(`${prefix}_p50${suffix}`, pct(times, 0.5), 'ms');
    print(`${prefix}_p95${suffix}`, pct(times, 0.95), 'ms');
    print(`${prefix}_rows${suffix}`, rows / queries.length, 'rows');
    out[suffix] = ids;
  }
  return out;
}

/**
 * Cosine above which a neighbour is related: unrelated topic centres sit at 0 ± 0.03 in 1024 dims, so below
 * this the exact order is noise (a filter that leaves none of the query's topic ranks only such notes).
 */
const RELATED = 0.2;

/** recall@10 vs exact, over all of exact's top 10 and over its related ones only. */
function recall(prefix: string, exact: Answers, approx: Answers): void {
  for (const suffix of Object.keys(FILTERS)) {
    const count = { hit: 0, total: 0, relatedHit: 0, related: 0 };
    exact[suffix].forEach((want, i) => {
      const got = new Set(approx[suffix][i].map((x) => x.id));
      for (const w of want) {
        count.total++;
        if (got.has(w.id)) count.hit++;
        if (w.similarity < RELATED) continue;
        count.related++;
        if (got.has(w.id)) count.relatedHit++;
      }
    });
    print(`${prefix}_recall_at_10${suffix}`, (count.total ? count.hit / count.total : 1).toFixed(3), 'fraction');
    print(
      `${prefix}_recall_at_10_related${suffix}`,
      (count.related ? count.relatedHit / count.related : 1).toFixed(3),
      `fraction (of ${count.related} exact rows with cosine ≥ ${RELATED})`,
    );
  }
}

/** Whether the candidate query's plan walks the named index, per filter ("yes,yes,no,yes": unfiltered, folder, rare, half). */
async function planUses(db: Database, ranking: ChunkRanking, vaultId: number, index: string): Promise<string> {
  const out: string[] = [];
  for (const filters of Object.values(FILTERS)) {
    const plan = await db.transaction().execute(async (trx) => {
      await ranking.prepare?.(trx);
      return sql<{
        'QUERY PLAN': string;
      }>`EXPLAIN ${chunkQuery(ranking, vaultId, queries[0], K, filters, firstCandidateLimit(K, MAX_CHUNKS))}`.execute(
        trx,
      );
    });
    out.push(plan.rows.some((r) => r['QUERY PLAN'].includes(`Index Scan using ${index}`)) ? 'yes' : 'no');
  }
  return out.join(',');
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const s = Date.now();
  await fn();
  return Date.now() - s;
}

/** Per-chunk cost of writing one note's chunks (delete + insert, as the worker does) with whatever index or trigger is present. */
async function insertCost(db: Database, vaultId: number): Promise<number> {
  const ids = await sql<{
    id: string;
  }>`SELECT id FROM notes WHERE vault_id = ${vaultId} ORDER BY id LIMIT ${INSERT_SAMPLE_NOTES}`.execute(db);
  const ms = await timed(async () => {
    for (const { id } of ids.rows) {
      await db.transaction().execute(async (trx) => {
        await sql`DELETE FROM search_chunks WHERE note_id = ${id}`.execute(trx);
        const values = Array.from(
          { length: CHUNKS_PER_NOTE },
          (_, o) => sql`(${id}, ${vaultId}, ${o}, ${o}, 'h', 'p', 'x', ${literal(chunkVector(Number(id)))}::vector)`,
        );
        await sql`INSERT INTO search_chunks (note_id, vault_id, ordinal, section_ordinal, heading_path, preview, content_hash, embedding) VALUES ${sql.join(values)}`.execute(
          trx,
        );
      });
    }
  });
  return ms / (ids.rows.length * CHUNKS_PER_NOTE);
}

/** Whether the quantized re-rank fetches candidates by primary key ("yes,…" per filter). */
async function quantizedPlanByKey(db: Database, vaultId: number, perNote: number): Promise<string> {
  const out: string[] = [];
  for (const filters of Object.values(FILTERS)) {
    const plan = await sql<{
      'QUERY PLAN': string;
    }>`EXPLAIN ${quantizedQuery(vaultId, queries[0], K, filters, quantizedCandidateLimit(K, perNote))}`.execute(db);
    out.push(
      plan.rows.some((r) => /Index Scan using search_chunks_pkey on search_chunks c/.test(r['QUERY PLAN']))
        ? 'yes'
        : 'no',
    );
  }
  return out.join(',');
}

/**
 * Quantized p50/p95 and recall@10 vs `exact`: the quantized query alone (every filter through the bits) for
 * each oversampling value, then as shipped (defaults: a filter leaving ≤ EXACT_BELOW_DEFAULT chunks ranked exactly).
 */
async function quantizedFigures(
  prefix: string,
  db: Database,
  vaultId: number,
  exact: Answers,
  values: number[],
): Promise<void> {
  for (const perNote of values) {
    const name = `${prefix}_c${perNote}`;
    print(`${name}_candidates`, quantizedCandidateLimit(K, perNote), `chunks (k ${K} × ${perNote})`);
    const approx = await timeStrategy(
      name,
      quantizedVectorSearch(db, { candidatesPerNote: perNote, exactBelow: 0, maxChunksPerNote: MAX_CHUNKS }),
      vaultId,
    );
    recall(name, exact, approx);
  }
  const shipped = `${prefix}_shipped`;
  print(`${shipped}_candidates_per_note`, QUANTIZED_DEFAULT, 'chunks');
  print(`${shipped}_exact_below`, EXACT_BELOW_DEFAULT, 'chunks');
  const approx = await timeStrategy(
    shipped,
    quantizedVectorSearch(db, {
      candidatesPerNote: QUANTIZED_DEFAULT,
      exactBelow: EXACT_BELOW_DEFAULT,
      maxChunksPerNote: MAX_CHUNKS,
    }),
    vaultId,
  );
  recall(shipped, exact, approx);
  print(`${prefix}_plan_rerank_by_pkey`, await quantizedPlanByKey(db, vaultId, QUANTIZED_DEFAULT), FILTER_NAMES);
}

async function relationMiB(db: Database, table: string): Promise<number> {
  const r = await sql<{ b: string }>`SELECT pg_total_relation_size(${table}::regclass)::text AS b`.execute(db);
  return Number(r.rows[0]?.b ?? 0) / 1048576;
}

const log = { debug() {}, info() {}, warn() {}, error() {} };
const vault = makeVault();
console.log(
  `machine: ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}; data: ${notes} notes in ${FOLDERS} folders (+3-note Rare/), ${CHUNKS_PER_NOTE} chunks/note, ${CENTERS} clusters, seed 42, storage ${storage}, parts ${parts}`,
);
print('semantic_chunks', chunks, 'chunks');
print('semantic_dims', dims, 'dims');
print('semantic_rounds', rounds, 'queries');
try {
  // --- embedded PGlite --------------------------------------------------------------------------
  {
    const server = await start(vault);
    try {
      const db = server.host.database.db;
      const vaultId = server.host.vaultHandle.id;
      // Loaded as the quantized strategy runs: the bits trigger (migration 0004) writes each chunk's copy.
      const ms = await load(db, vaultId, chunks);
      print('pglite_quantized_load', ms / 1000, 's');
      print('pglite_quantized_load_per_chunk', ms / chunks, 'ms');
      print('pglite_quantized_bits_table', await relationMiB(db, 'search_chunk_bits'), 'MiB');
      print('pglite_chunks_table', await relationMiB(db, 'search_chunks'), 'MiB');
      await sql`ANALYZE search_chunk_bits`.execute(db);
      if (parts !== 'pglite-quantized') await timeStrategy('pglite_exact_joinall', joinAllExact(db), vaultId);
      const exact = await timeStrategy('pglite_exact', exactVectorSearch(db, MAX_CHUNKS), vaultId);
      await quantizedFigures('pglite_quantized', db, vaultId, exact, oversampling);
      print('pglite_quantized_insert_per_chunk', await insertCost(db, vaultId), 'ms');
      await syncChunkBits(db, log, false);
      print('pglite_exact_insert_per_chunk', await insertCost(db, vaultId), 'ms');
      // What a vault embedded before migration 0004 (or under another strategy) pays once at start.
      print('pglite_quantized_backfill', (await timed(() => syncChunkBits(db, log, true))) / 1000, 's');
      await syncChunkBits(db, log, false);
      if (parts !== 'pglite-quantized') {
        const build = await timed(() =>
          db.transaction().execute(async (trx) => {
            await sql`SET LOCAL maintenance_work_mem = '512MB'`.execute(trx);
            await sql`CREATE INDEX bench_hnsw ON search_chunks USING hnsw ((embedding::vector(${sql.raw(String(dims))})) vector_cosine_ops)`.execute(
              trx,
            );
          }),
        );
        print('pglite_hnsw_index_build', build / 1000, 's');
        print('pglite_hnsw_index_build_per_chunk', build / chunks, 'ms');
        const approx = await timeStrategy('pglite_hnsw', pgliteHnsw(db), vaultId);
        print('pglite_hnsw_plan_uses_index', await planUses(db, pgliteRanking(), vaultId, 'bench_hnsw'), FILTER_NAMES);
        recall('pglite_hnsw', exact, approx);
        print('pglite_hnsw_insert_per_chunk', await insertCost(db, vaultId), 'ms');
        await sql`DROP INDEX bench_hnsw`.execute(db);
      }
      print('pglite_rss', Math.round(process.memoryUsage().rss / 1048576), 'MiB');
    } finally {
      await server.close();
    }
  }
  // --- server engine over the wire (PGlite + pgvector behind pglite-socket) ----------------------
  if (parts === 'all') {
    const wire = await startPgliteWire();
    const server = await start(vault, { url: wire.url, poolSize: 4 });
    try {
      const db = server.host.database.db;
      const vaultId = server.host.vaultHandle.id;
      await syncChunkBits(db, log, false); // as the server runs under hnsw: no bits trigger
      const ms = await load(db, vaultId, chunks);
      print('postgres_exact_load', ms / 1000, 's');
      print('postgres_exact_load_per_chunk', ms / chunks, 'ms');
      const exactAll = await timeStrategy('postgres_exact', exactVectorSearch(db, MAX_CHUNKS), vaultId);
      print('postgres_quantized_backfill', (await timed(() => syncChunkBits(db, log, true))) / 1000, 's');
      await sql`ANALYZE search_chunk_bits`.execute(db);
      await quantizedFigures('postgres_quantized', db, vaultId, exactAll, [QUANTIZED_DEFAULT]);
      await syncChunkBits(db, log, false);
      if (wireHnswChunks < chunks) {
        // The halfvec build runs in WASM here (~29 ms/chunk): shrink to a size it finishes in minutes.
        // Keep the Rare/ notes and an even spread over the other folders (md5 order), drop the rest.
        await sql`DELETE FROM search_chunks WHERE note_id IN (SELECT id FROM notes WHERE vault_id = ${vaultId}
          ORDER BY path LIKE 'Rare/%' DESC, md5(path) OFFSET ${Math.ceil(wireHnswChunks / CHUNKS_PER_NOTE)})`.execute(
          db,
        );
        await sql`VACUUM ANALYZE search_chunks`.execute(db);
      }
      print('postgres_hnsw_chunks', wireHnswChunks, 'chunks');
      const exact = await timeStrategy('postgres_exact_at_hnsw_chunks', exactVectorSearch(db, MAX_CHUNKS), vaultId);
      const build = await timed(() => syncHnswIndex(db, log, dims));
      print('postgres_hnsw_index_build', build / 1000, 's');
      print('postgres_hnsw_index_build_per_chunk', build / wireHnswChunks, 'ms');
      const approx = await timeStrategy(
        'postgres_hnsw',
        hnswVectorSearch(db, { dims, efSearch: EF_SEARCH, maxChunksPerNote: MAX_CHUNKS }),
        vaultId,
      );
      print(
        'postgres_hnsw_plan_uses_index',
        await planUses(db, hnswRanking(dims, EF_SEARCH), vaultId, `search_chunks_hnsw_${dims}`),
        FILTER_NAMES,
      );
      recall('postgres_hnsw', exact, approx);
      print('postgres_hnsw_insert_per_chunk', await insertCost(db, vaultId), 'ms');
    } finally {
      await server.close();
      await wire.stop();
    }
  }
  print('rss', Math.round(process.memoryUsage().rss / 1048576), 'MiB');
} finally {
  rmSync(vault, { recursive: true, force: true });
}
