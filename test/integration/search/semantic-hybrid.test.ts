// The semantic arm end to end against a loopback embedding server (OpenAI and Ollama protocols):
// background embedding, one row per note with a section locator, stale rows, RRF fusion, the
// keyword-only marker on provider outage, rerank, and the embedding fingerprint at boot.
import t from 'tap';

type ToolResult = { isError?: boolean; content?: unknown; structuredContent?: unknown };
import { resetEmbeddings } from '../../../plugins/search/family.js';
import type { EmbeddingWorker } from '../../../plugins/search/embeddings/service.js';
import type { EmbeddingsService } from '../../../plugins/search/embeddings/types.js';
import { textOf } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';
import { fakeEmbeddingSettings, startEmbeddingServer, waitEmbedded as waitEmbeddedFor } from './embedding-server.js';

const fake = await startEmbeddingServer(64);
const others = {
  files: { enabled: false },
  graph: { enabled: false },
  tasks: { enabled: false },
  notes: { enabled: false },
};
const embedding = fakeEmbeddingSettings(fake);
const server = await startTestServer({
  files: {
    'Garden/Tomatoes.md':
      '# Tomatoes\n\nIntro line.\n\n## Watering\n\nWater the tomato plants deeply twice a week in summer heat.\n\n## Pests\n\nAphids and hornworms eat the leaves.\n',
    'Garden/Roses.md': '# Roses\n\nPrune rose bushes in early spring before new growth.\n',
    'Kitchen/Bread.md': '# Bread\n\nKnead the dough, let it rise, bake the loaf at high heat.\n',
    'Kitchen/Soup.md': '# Soup\n\nSimmer tomato soup with basil and garlic.\n',
    'Work/Meetings.md': '---\ntags: [work]\n---\n# Meetings\n\nWeekly planning meeting agenda and notes.\n',
  },
  config: {
    vault: { obsidianName: 'Garden Vault' },
    families: others,
    search: { embedding, rerank: { url: `${fake.url}/rerank`, timeoutMs: 2000 } },
  },
});
t.teardown(async () => {
  await server.close();
  await fake.close();
});
const vaultId = server.host.vaultHandle.id;
const index = server.host.services.named.get('index') as IndexService;
const ready = await index.whenReady(vaultId, 60_000);
const client = await server.connect();
const svc = () => server.host.manager.registry.providedService('embeddings') as EmbeddingsService;

const waitEmbedded = (n: number) => waitEmbeddedFor(() => svc().counts(vaultId), n, 15_000);

async function call(name: string, args: Record<string, unknown>) {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  if (r.isError) t.fail(textOf(r));
  return { out: r.structuredContent as Record<string, any>, text: textOf(r) };
}

t.test('notes are embedded in the background, in batches', async (t) => {
  t.ok(ready);
  const c = await waitEmbedded(5);
  t.equal(c.embedded, 5);
  t.ok(
    fake.requests.length > 0 && fake.requests.every((r) => r.path === '/v1/embeddings' && r.inputs <= 4),
    'batched by batchSize',
  );
});

t.test('semantic_search: one row per note, best chunk, section locator and preview', async (t) => {
  const { out, text } = await call('semantic_search', { query: 'water the tomato plants deeply', limit: 3 });
  t.equal(out.semantic, 'ok');
  t.equal(out.rows[0].path, 'Garden/Tomatoes.md');
  t.equal(out.rows[0].section, '§ "Tomatoes/Watering" (#2)');
  t.match(out.rows[0].preview, /Water the tomato plants/);
  t.equal(
    out.rows[0].deep_link,
    'obsidian://open?vault=Garden%20Vault&file=Garden%2FTomatoes',
    'rows link into Obsidian when vault.obsidianName is set',
  );
  t.match(text, /open: obsidian:\/\/open\?vault=Garden%20Vault&file=Garden%2FTomatoes/);
  t.equal(new Set(out.rows.map((r: { path: string }) => r.path)).size, out.rows.length, 'one row per note');
  t.match(text, /notes: 5 embedded, 0 queued, 0 stale/);
  t.match(text, /confidence: ok/);
  const filtered = await call('semantic_search', { query: 'weekly planning', tags: ['work'] });
  t.same(
    filtered.out.rows.map((r: { path: string }) => r.path),
    ['Work/Meetings.md'],
  );
});

t.test('/health shows the embedding progress as counts', async (t) => {
  const health = (await (
    await fetch(`${server.url}/health`, { headers: { authorization: `Bearer ${server.key}` } })
  ).json()) as {
    familyHealth?: Record<string, Record<string, unknown>>;
  };
  const search = health.familyHealth?.search;
  t.equal(search?.semantic, true);
  t.ok(Number(search?.embedded) >= 5, 'every note embedded');
  t.equal(search?.queued, 0);
});

t.test('hybrid_search fuses both arms with RRF terms', async (t) => {
  const { out, text } = await call('hybrid_search', { query: 'tomato', limit: 5 });
  t.equal(out.arms, 'keyword+semantic');
  const top = out.rows[0];
  t.ok(top.keyword_rank && top.semantic_rank);
  t.equal(Math.round((1 / (60 + top.keyword_rank) + 1 / (60 + top.semantic_rank)) * 1e6) / 1e6, top.score);
  t.match(text, /fused 0\.0\d+ · kw \d+ \(0\.0\d+\) · sem \d+ \(0\.0\d+\)/);
  t.match(top.deep_link, /^obsidian:\/\/open\?vault=Garden%20Vault&file=/);
  const kw = await call('keyword_search', { query: 'bread dough' });
  t.equal(kw.out.rows[0].deep_link, 'obsidian://open?vault=Garden%20Vault&file=Kitchen%2FBread');
});

t.test('rerank reorders fetched candidates and says so', async (t) => {
  const { out } = await call('semantic_search', { query: 'bread loaf', rerank: true, limit: 2 });
  t.match(out.reranked, /^true \(candidates: \d+\)$/);
  t.equal(out.rows[0].path, 'Kitchen/Bread.md');
  t.type(out.rows[0].rerank_score, 'number');
  const h = await call('hybrid_search', { query: 'bread loaf', rerank: true });
  t.match(h.out.reranked, /^true \(candidates: \d+\)$/);
});

t.test('provider outage: old vectors stay, changed notes are stale, hybrid says keyword-only', async (t) => {
  fake.down = true;
  await server.host.vaultHandle.fs.replace(
    'Garden/Roses.md',
    Buffer.from('# Roses\n\nPrune rose bushes in late winter.\n'),
  );
  await index.noteWritten(vaultId, 'Garden/Roses.md');
  const sem = await call('semantic_search', { query: 'prune rose bushes' });
  t.match(sem.out.semantic, /^unavailable: embedding provider failed: HTTP 503/);
  const h = await call('hybrid_search', { query: 'prune rose' });
  t.match(h.out.arms, /^keyword-only \(semantic unavailable: embedding provider failed: HTTP 503/);
  t.equal(h.out.rows[0].path, 'Garden/Roses.md');
  t.match(h.text, /arms: keyword-only \(semantic unavailable: /);
  const counts = await svc().counts(vaultId);
  t.equal(counts.stale, 1);
  t.equal(counts.embedded, 5, 'old vectors are kept');
  // Hold the background embedder so the provider's return cannot re-embed the note before the query.
  await (svc() as EmbeddingWorker).stop();
  fake.down = false;
  // Query works again before the note is re-embedded: the stale row keeps its rank, without a preview.
  const stale = await call('semantic_search', { query: 'prune rose bushes early spring' });
  const roses = stale.out.rows.find((r: { path: string }) => r.path === 'Garden/Roses.md');
  t.equal(roses.stale, true, 'the changed note is still stale');
  t.equal(roses.preview, null);
  t.equal(roses.section, null);
  t.match(stale.text, /stale: changed since embedded, preview withheld/);
  // The outage left the row backing off (capped at maxBackoffMs): drain until it comes due and succeeds.
  const deadline = Date.now() + 10_000;
  while ((await svc().counts(vaultId)).stale > 0 && Date.now() < deadline) {
    await svc().drain();
    await new Promise((r) => setTimeout(r, 50));
  }
  t.equal((await svc().counts(vaultId)).stale, 0, 'retried after the outage');
});

t.test('a changed embedding model refuses to start until reset-embeddings', async (t) => {
  await server.rewriteConfig({ search: { embedding: { ...embedding, provider: 'ollama', baseUrl: fake.url } } });
  const status = server.host.manager.registry.status.get('search');
  t.match(
    status?.reason,
    /stored embeddings were made with .*"provider":"openai".*now says .*"provider":"ollama".*reset-embeddings/,
  );
  fake.down = true; // the old generation still serves: keep it from re-embedding before the swap
  const queued = await resetEmbeddings(server.host.database.db);
  t.ok(queued >= 5);
  fake.requests.length = 0;
  await server.rewriteConfig({
    search: { embedding: { ...embedding, provider: 'ollama', baseUrl: fake.url }, rrfK: 61 },
  });
  t.equal(server.host.manager.registry.status.get('search')?.state, 'serving');
  fake.down = false;
  await waitEmbedded(5);
  t.ok(
    fake.requests.some((r) => r.path === '/api/embed'),
    'the ollama protocol was spoken',
  );
  const { out } = await call('semantic_search', { query: 'simmer tomato soup basil' });
  t.equal(out.rows[0].path, 'Kitchen/Soup.md');
});

t.test('plaintext to a non-loopback host is refused unless allowed', async (t) => {
  await server.rewriteConfig({
    search: { embedding: { ...embedding, provider: 'ollama', baseUrl: 'http://10.1.2.3:11434' }, rrfK: 62 },
  });
  // A semantic search that cannot work in this configuration is not listed, and refused with the reason.
  const r = await client.callTool({ name: 'semantic_search', arguments: { query: 'x' } });
  t.ok(r.isError, 'semantic_search is refused while the provider is refused');
  t.match(textOf(r), /embedding URL refused: plaintext http to 10\.1\.2\.3 is refused/);
});
