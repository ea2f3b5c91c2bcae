// The embedding providers (ollama and openai client packages) against the loopback test server: both
// protocols, batching order, the API key header only when configured, retry on 503, and the bound
// fetch that refuses any URL outside the configured base before a socket opens.
import t from 'tap';
import { boundFetch } from '../../../plugins/search/embeddings/http.js';
import { ollamaProvider } from '../../../plugins/search/embeddings/providers/ollama.js';
import { openAiProvider } from '../../../plugins/search/embeddings/providers/openai.js';
import { ProviderError } from '../../../plugins/search/embeddings/types.js';
import type { EmbeddingSettings } from '../../../plugins/search/settings.js';
import { hashVector, startEmbeddingServer } from '../../integration/search/embedding-server.js';

const fake = await startEmbeddingServer(16);
t.teardown(() => fake.close());

const base: EmbeddingSettings = {
  provider: 'openai',
  baseUrl: `${fake.url}/v1`,
  model: 'hash',
  dimensions: 16,
  apiKey: '',
  allowPlaintext: false,
  queryPrefix: '',
  batchSize: 8,
  notesPerPass: 4,
  pollMs: 100,
  timeoutMs: 2000,
  retries: 0,
  backoffMs: 5,
  maxBackoffMs: 100,
  chunkTokens: 512,
  chunkOverlap: 0,
  maxChunksPerNote: 8,
};

t.test('openai client: vectors in input order, no Authorization without a key', async (t) => {
  fake.requests.length = 0;
  const v = await openAiProvider(base).embed(['alpha beta', 'gamma']);
  t.same(v, [hashVector('alpha beta', 16), hashVector('gamma', 16)]);
  t.same(
    fake.requests.map((r) => [r.path, r.inputs, r.authorization]),
    [['/v1/embeddings', 2, undefined]],
  );
  fake.requests.length = 0;
  await openAiProvider({ ...base, apiKey: 'sk-test' }).embed(['x']);
  t.equal(fake.requests[0].authorization, 'Bearer sk-test');
});

t.test('ollama client: /api/embed on the configured host', async (t) => {
  fake.requests.length = 0;
  const v = await ollamaProvider({ ...base, provider: 'ollama', baseUrl: fake.url }).embed(['delta']);
  t.same(v, [hashVector('delta', 16)]);
  t.same(
    fake.requests.map((r) => r.path),
    ['/api/embed'],
  );
});

t.test('503 is retried with backoff, then reported as HTTP 503', async (t) => {
  fake.down = true;
  fake.requests.length = 0;
  for (const p of [
    openAiProvider({ ...base, retries: 2 }),
    ollamaProvider({ ...base, provider: 'ollama', baseUrl: fake.url, retries: 2 }),
  ]) {
    const err = await p.embed(['x']).catch((e: unknown) => e);
    t.ok(err instanceof ProviderError, p.name);
    t.match((err as Error).message, /^HTTP 503/);
  }
  t.equal(fake.requests.length, 6, 'three tries each');
  fake.down = false;
});

t.test('wrong dimensions and a dead port are provider errors', async (t) => {
  const dims = await openAiProvider({ ...base, dimensions: 0 })
    .embed(['x'])
    .then(() => 'ok');
  t.equal(dims, 'ok', 'dimensions 0 accepts what the server returns');
  const bad = await ollamaProvider({ ...base, provider: 'ollama', baseUrl: fake.url, dimensions: 8 })
    .embed(['x'])
    .catch((e: Error) => e.message);
  t.match(bad, /returned 16 dimensions, configured 8/);
  const dead = await openAiProvider({ ...base, baseUrl: 'http://127.0.0.1:9/v1' })
    .embed(['x'])
    .catch((e: unknown) => e);
  t.ok(dead instanceof ProviderError && dead.retryable);
});

t.test('the bound fetch refuses any URL outside its base', async (t) => {
  const f = boundFetch(`${fake.url}/v1`, { timeoutMs: 1000 });
  for (const url of ['http://example.com/v1/embeddings', `${fake.url}/other`, `${fake.url}/v1x/embeddings`]) {
    const err = await f(url).catch((e: unknown) => e);
    t.ok(err instanceof ProviderError && /refused to contact/.test(err.message), url);
  }
});
