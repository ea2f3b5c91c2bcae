// The HNSW strategy on the server engine (PGlite + pgvector 0.8 behind the wire protocol): chosen by auto,
// its halfvec index built at start, semantic_search still ranks by meaning, and a folder holding 1 of 201
// notes still answers although a post-filtered index scan (no iterative scan) would return nothing.
import { sql } from 'kysely';
import t from 'tap';
import type { EmbeddingWorker } from '../../../plugins/search/embeddings/service.js';
import { chunkQuery, type ChunkRanking } from '../../../plugins/search/embeddings/vector-search.js';
import { hnswRanking } from '../../../plugins/search/embeddings/vector-search-hnsw.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { startPgliteWire } from '../../../src/host/testing/pglite-wire.js';
import type { IndexService } from '../../../src/sdk/index-service.js';
import type { Database } from '../../../src/sdk/index.js';
import { fakeEmbeddingSettings, hashVector, startEmbeddingServer } from './embedding-server.js';

const DIMS = 64;
const EF = 10;
const BULK = 200;
const files: Record<string, string> = {
  'Lone/Physics.md': '# Physics\n\nQuantum chromodynamics on a lattice with gauge fields.\n',
};
const crops = ['tomato', 'pepper', 'bean', 'squash', 'lettuce', 'carrot', 'onion', 'garlic', 'melon', 'kale'];
for (let i = 0; i < BULK; i++) {
  files[`Bulk/Garden ${i}.md`] =
    `# Garden ${i}\n\nWater the ${crops[i % crops.length]} bed in the garden, plot ${i}, every morning.\n`;
}

const wire = await startPgliteWire();
const fake = await startEmbeddingServer(DIMS);
const embedding = fakeEmbeddingSettings(fake, DIMS, { pollMs: 10, notesPerPass: 100, batchSize: 100 });
const server = await startTestServer({
  files,
  config: {
    ...wire.config,
    families: {
      files: { enabled: false },
      graph: { enabled: false },
      tasks: { enabled: false },
      transfer: { enabled: false },
    },
    search: { embedding, hnswEfSearch: EF },
  },
});
t.teardown(async () => {
  await server.close();
  await fake.close();
  await wire.stop();
});

const db = server.host.database.db;
const vaultId = server.host.vaultHandle.id;
const svc = () => server.host.manager.registry.providedService('embeddings') as EmbeddingWorker;
await (server.host.services.named.get('index') as IndexService).whenReady(vaultId, 60_000);
const deadline = Date.now() + 60_000;
for (;;) {
  const c = await svc().counts(vaultId);
  if (c.embedded >= BULK + 1 && c.queued === 0) break;
  if (Date.now() > deadline) throw new Error(`embedding did not finish: ${JSON.stringify(c)}`);
  await new Promise((r) => setTimeout(r, 50));
}
await sql`ANALYZE search_chunks`.execute(db);
const query = hashVector('water the tomato bed in the garden every morning', DIMS);

/** The candidate query's plan and rows in one transaction, with the ranking's settings plus `extra`. */
async function candidates(
  ranking: ChunkRanking,
  extra: string[],
  folder?: string,
): Promise<{ plan: string; paths: string[]; chunks: number }> {
  return db.transaction().execute(async (trx: Database) => {
    await ranking.prepare?.(trx);
    for (const s of extra) await sql.raw(s).execute(trx);
    const q = chunkQuery(ranking, vaultId, query, 5, folder ? { folder } : {}, 40);
    const plan = (await sql<{ 'QUERY PLAN': string }>`EXPLAIN ${q}`.execute(trx)).rows
      .map((r) => r['QUERY PLAN'])
      .join('\n');
    const rows = await q.execute(trx);
    return { plan, paths: rows.rows.map((r) => r.path), chunks: rows.rows[0]?.candidates ?? 0 };
  });
}

t.test('auto picks hnsw on the server engine and builds the halfvec index at start', async (t) => {
  t.equal(server.host.database.engine.kind, 'postgres');
  t.equal(svc().vectors.strategy, 'hnsw');
  const idx = await sql<{
    indexdef: string;
  }>`SELECT indexdef FROM pg_indexes WHERE tablename = 'search_chunks' AND indexname = ${`search_chunks_hnsw_${DIMS}`}`.execute(
    db,
  );
  t.match(idx.rows[0]?.indexdef, /USING hnsw \(\(\(embedding\)::halfvec\(64\)\) halfvec_cosine_ops\)/);
  const health = (await (
    await fetch(`${server.url}/health`, { headers: { authorization: `Bearer ${server.key}` } })
  ).json()) as {
    familyHealth?: Record<string, Record<string, unknown>>;
  };
  t.equal(health.familyHealth?.search?.vectorSearch, 'hnsw');
});

t.test('semantic_search ranks by meaning through the index', async (t) => {
  const client = await server.connect();
  const sem = (
    await client.callTool({
      name: 'semantic_search',
      arguments: { query: 'quantum chromodynamics lattice gauge', limit: 3 },
    })
  ).structuredContent as { semantic: string; rows: Array<{ path: string }> };
  t.equal(sem.semantic, 'ok');
  t.equal(sem.rows[0]?.path, 'Lone/Physics.md');
  const similar = await svc().nearestNotes(
    vaultId,
    {
      noteId: Number(
        (await sql<{ id: string }>`SELECT id FROM notes WHERE path = 'Bulk/Garden 0.md'`.execute(db)).rows[0].id,
      ),
    },
    5,
  );
  t.equal(similar.length, 5, 'similar notes by a note id');
  t.notOk(
    similar.some((r) => r.path === 'Bulk/Garden 0.md'),
    'the note itself is left out',
  );
  t.ok(similar.every((r) => r.path.startsWith('Bulk/')));
});

t.test('a selective folder filter returns its note, where a post-filtered index scan finds none', async (t) => {
  // At this size the planner ranks the folder's chunks exactly; the controls steer it onto the index
  // (no sort allowed), as it would choose on a large table or under a filter it cannot estimate.
  const onIndex = ['SET LOCAL enable_sort = off'];
  const noIterative = 'SET LOCAL hnsw.iterative_scan = off';
  const plain = await candidates(hnswRanking(DIMS, EF), [noIterative, ...onIndex]);
  t.match(plain.plan, /Index Scan using search_chunks_hnsw_64/);
  t.equal(plain.chunks, EF, 'without iterative scan the index walk stops at ef_search chunks');
  t.notOk(plain.paths.includes('Lone/Physics.md'), 'and Lone/ is not among them');
  const postFiltered = await candidates(hnswRanking(DIMS, EF), [noIterative, ...onIndex], 'Lone');
  t.match(postFiltered.plan, /Index Scan using search_chunks_hnsw_64/);
  t.same(postFiltered.paths, [], 'so filtering after that walk leaves nothing');
  const iterative = await candidates(hnswRanking(DIMS, EF), onIndex, 'Lone');
  t.match(iterative.plan, /Index Scan using search_chunks_hnsw_64/);
  t.same(
    iterative.paths,
    ['Lone/Physics.md'],
    "the strategy's iterative scan walks on until the filter lets a row through",
  );
  // The strategy as shipped, on whichever plan the planner picks, and the tool.
  const rows = await svc().nearestNotes(vaultId, { vector: query }, 5, { folder: 'Lone' });
  t.same(
    rows.map((r) => r.path),
    ['Lone/Physics.md'],
  );
  const client = await server.connect();
  const sem = (
    await client.callTool({ name: 'semantic_search', arguments: { query: 'water the tomato bed', folder: 'Lone' } })
  ).structuredContent as { rows: Array<{ path: string }> };
  t.same(
    sem.rows.map((r) => r.path),
    ['Lone/Physics.md'],
  );
});
