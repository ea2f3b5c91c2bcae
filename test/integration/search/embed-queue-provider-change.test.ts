// Without an embedding provider the keyword contributor queues nothing for embedding (the queue would only grow); a
// provider configured later finds what it has to embed when its service starts (queueUnembedded), and so does one
// configured again after a spell without, for the notes that changed meanwhile.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import type { EmbeddingsService } from '../../../plugins/search/embeddings/types.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { Database } from '../../../src/sdk/index.js';
import type { IndexService } from '../../../src/sdk/index-service.js';
import { fakeEmbeddingSettings, startEmbeddingServer, waitEmbedded } from './embedding-server.js';

const fake = await startEmbeddingServer(64);
const embedding = fakeEmbeddingSettings(fake);
const server = await startTestServer({
  files: {
    'Tomatoes.md': '# Tomatoes\n\nWater the tomato plants deeply twice a week.\n',
    'Roses.md': '# Roses\n\nPrune rose bushes in early spring.\n',
    'Bread.md': '# Bread\n\nKnead the dough and bake the loaf.\n',
  },
  config: { families: { files: { enabled: false }, graph: { enabled: false }, tasks: { enabled: false } } },
});
t.teardown(async () => {
  await server.close();
  await fake.close();
});
const vaultId = server.host.vaultHandle.id;
const index = () => server.host.services.named.get('index') as IndexService;
const db = () => server.host.services.named.get('db') as Database;
const count = async (query: ReturnType<typeof sql<{ n: number }>>) => Number((await query.execute(db())).rows[0].n);
const queued = () =>
  count(sql<{ n: number }>`SELECT count(*)::int AS n FROM search_embed_queue WHERE vault_id = ${vaultId}`);
/** Notes whose vectors were made from content they no longer have. */
const staleVectors = () =>
  count(
    sql<{ n: number }>`SELECT count(*)::int AS n FROM search_embedded_notes e JOIN notes n ON n.id = e.note_id
      WHERE e.vault_id = ${vaultId} AND e.content_hash <> n.content_hash`,
  );
const notes = () => count(sql<{ n: number }>`SELECT count(*)::int AS n FROM notes WHERE vault_id = ${vaultId}`);
const service = async (): Promise<EmbeddingsService> => {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const svc = server.host.manager.registry.providedService('embeddings') as EmbeddingsService | undefined;
    if (svc && !(await svc.counts(vaultId)).lastError) return svc;
    if (Date.now() > deadline) throw new Error('no embeddings service');
    await new Promise((r) => setTimeout(r, 50));
  }
};

t.test('no provider: the index queues nothing for embedding', async (t) => {
  t.equal(await index().whenReady(vaultId, 60_000), true);
  t.equal(await notes(), 3);
  t.equal(await queued(), 0, 'no queue row for any note');
  // An edit through the index as well (a deferred keyword write).
  writeFileSync(
    path.join(server.vaultDir, 'Bread.md'),
    '# Bread\n\nKnead the dough, proof it overnight, bake the loaf.\n',
  );
  await index().settled(vaultId);
  t.equal(await queued(), 0, 'nor for an edited note');
});

t.test('a provider configured later embeds every note', async (t) => {
  await server.rewriteConfig({ search: { embedding } });
  const svc = await service();
  const c = await waitEmbedded(() => svc.counts(vaultId), 3);
  t.equal(c.embedded, 3, 'the three notes are embedded');
  t.equal(c.stale, 0);
});

t.test('after a spell without a provider, the notes changed meanwhile are embedded again', async (t) => {
  await server.rewriteConfig({ search: { embedding: { provider: 'none' } } });
  writeFileSync(
    path.join(server.vaultDir, 'Roses.md'),
    '# Roses\n\nPrune rose bushes in early spring; feed them in May.\n',
  );
  const waitIndexed = Date.now() + 20_000;
  while (Date.now() < waitIndexed) {
    await index().settled(vaultId);
    if ((await staleVectors()) === 1) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  t.equal(await staleVectors(), 1, 'the edit is indexed: its vectors are stale');
  t.equal(await queued(), 0, 'the edit queued nothing without a provider');
  await server.rewriteConfig({ search: { embedding } });
  const svc = await service();
  const deadline2 = Date.now() + 20_000;
  let c = await svc.counts(vaultId);
  while ((c.stale > 0 || c.queued > 0) && Date.now() < deadline2) {
    await new Promise((r) => setTimeout(r, 50));
    c = await svc.counts(vaultId);
  }
  t.equal(c.stale, 0, 'the changed note is embedded at its new content');
  t.equal(c.queued, 0);
  t.equal(c.embedded, 3);
});
