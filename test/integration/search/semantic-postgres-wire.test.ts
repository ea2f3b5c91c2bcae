// The server engine's vector path: semantic and hybrid search through `pg` over the PostgreSQL wire
// protocol, against PGlite with pgvector served on loopback (the machine's PostgreSQL 15 has no pgvector).
import t from 'tap';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { startPgliteWire } from '../../../src/host/testing/pglite-wire.js';
import type { IndexService } from '../../../src/sdk/index-service.js';
import type { EmbeddingsService } from '../../../plugins/search/embeddings/types.js';
import { startEmbeddingServer } from './embedding-server.js';

const wire = await startPgliteWire();
const fake = await startEmbeddingServer(64);
const embedding = {
  provider: 'openai',
  baseUrl: `${fake.url}/v1`,
  model: 'hash-64',
  dimensions: 64,
  pollMs: 20,
  backoffMs: 20,
  retries: 0,
  batchSize: 4,
};
const server = await startTestServer({
  files: {
    'Garden/Tomatoes.md': '# Tomatoes\n\n## Watering\n\nWater the tomato plants deeply twice a week in summer heat.\n',
    'Garden/Roses.md': '# Roses\n\nPrune rose bushes in early spring before new growth.\n',
    'Kitchen/Bread.md': '# Bread\n\nKnead the dough, let it rise, bake the loaf at high heat.\n',
  },
  config: {
    ...wire.config,
    families: {
      files: { enabled: false },
      graph: { enabled: false },
      tasks: { enabled: false },
      transfer: { enabled: false },
    },
    search: { embedding },
  },
});
t.teardown(async () => {
  await server.close();
  await fake.close();
  await wire.stop();
});

t.test('pgvector over the wire: notes are embedded and found by meaning; hybrid fuses both arms', async (t) => {
  t.equal(server.host.database.engine.kind, 'postgres');
  t.equal(server.host.database.engine.hasVector, true, 'pgvector detected through pg_available_extensions');
  const vaultId = server.host.vaultHandle.id;
  await (server.host.services.named.get('index') as IndexService).whenReady(vaultId, 60_000);
  const svc = server.host.manager.registry.providedService('embeddings') as EmbeddingsService;
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const c = await svc.counts(vaultId);
    if (c.embedded >= 3 && c.queued === 0) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const client = await server.connect();
  const sem = (
    await client.callTool({ name: 'semantic_search', arguments: { query: 'water the tomato plants deeply' } })
  ).structuredContent as { semantic: string; rows: Array<{ path: string; section: string }> };
  t.equal(sem.semantic, 'ok');
  t.equal(sem.rows[0]?.path, 'Garden/Tomatoes.md');
  t.equal(sem.rows[0]?.section, '§ "Tomatoes/Watering" (#2)');
  const hyb = (await client.callTool({ name: 'hybrid_search', arguments: { query: 'tomato watering' } }))
    .structuredContent as Record<string, unknown>;
  t.notMatch(JSON.stringify(hyb), /keyword-only/, 'both arms answered');
});
