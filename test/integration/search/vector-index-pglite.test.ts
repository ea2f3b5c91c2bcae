// search.vectorIndex on embedded PGlite: auto serves with the quantized scan (reported on /health), exact
// when asked, and an explicit hnsw refuses to start the family with the reason and the way out.
import { sql } from 'kysely';
import t from 'tap';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { startEmbeddingServer } from './embedding-server.js';

const fake = await startEmbeddingServer(16);
const embedding = {
  provider: 'openai',
  baseUrl: `${fake.url}/v1`,
  model: 'hash-16',
  dimensions: 16,
  pollMs: 20,
  backoffMs: 20,
  retries: 0,
};
const families = {
  files: { enabled: false },
  graph: { enabled: false },
  tasks: { enabled: false },
  notes: { enabled: false },
  transfer: { enabled: false },
};
const server = await startTestServer({
  files: { 'A.md': '# A\n\nalpha beta\n' },
  config: { families, search: { embedding, vectorIndex: 'hnsw' } },
});
t.teardown(async () => {
  await server.close();
  await fake.close();
});

t.test('vectorIndex hnsw on PGlite: the search family refuses to start, saying why', async (t) => {
  t.equal(server.host.database.engine.kind, 'pglite');
  const status = server.host.manager.registry.status.get('search');
  t.not(status?.state, 'serving');
  t.match(
    status?.reason,
    /search\.vectorIndex is hnsw, but the database is embedded PGlite.*set search\.vectorIndex to auto or exact/,
  );
});

t.test('vectorIndex auto on PGlite: serving with the quantized scan, no HNSW index', async (t) => {
  await server.rewriteConfig({ search: { embedding, vectorIndex: 'auto' } });
  t.equal(server.host.manager.registry.status.get('search')?.state, 'serving');
  const health = (await (
    await fetch(`${server.url}/health`, { headers: { authorization: `Bearer ${server.key}` } })
  ).json()) as {
    familyHealth?: Record<string, Record<string, unknown>>;
  };
  t.equal(health.familyHealth?.search?.vectorSearch, 'quantized');
  const idx = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_indexes
    WHERE tablename = 'search_chunks' AND indexname LIKE 'search_chunks_hnsw_%'`.execute(server.host.database.db);
  t.equal(idx.rows[0]?.n, 0);
});

t.test('vectorIndex exact on PGlite: serving with the exact scan', async (t) => {
  await server.rewriteConfig({ search: { embedding, vectorIndex: 'exact' } });
  t.equal(server.host.manager.registry.status.get('search')?.state, 'serving');
  const health = (await (
    await fetch(`${server.url}/health`, { headers: { authorization: `Bearer ${server.key}` } })
  ).json()) as {
    familyHealth?: Record<string, Record<string, unknown>>;
  };
  t.equal(health.familyHealth?.search?.vectorSearch, 'exact');
});
