// Test-only loopback server speaking the OpenAI `/v1/embeddings`, Ollama `/api/embed` and Jina
// `/rerank` protocols with deterministic outputs (hashed bag of words). Never a shipped provider.
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export function words(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).map((w) =>
    w.length > 3 && w.endsWith('s') ? w.slice(0, -1) : w,
  );
}

/** L2-normalised hashed bag of words. */
export function hashVector(text: string, dims: number): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const w of words(text)) {
    const h = createHash('sha256').update(w).digest();
    v[h.readUInt32BE(0) % dims] += h[4] & 1 ? 1 : -1;
  }
  const norm = Math.sqrt(v.reduce((a, b) => a + b * b, 0)) || 1;
  return v.map((x) => x / norm);
}

export interface FakeEmbeddingServer {
  readonly url: string;
  readonly requests: Array<{ path: string; inputs: number; authorization?: string }>;
  /** Answer 503 to every embedding request while true. */
  down: boolean;
  close(): Promise<void>;
}

export async function startEmbeddingServer(dims = 64): Promise<FakeEmbeddingServer> {
  const state = { down: false };
  const requests: Array<{ path: string; inputs: number; authorization?: string }> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const json = body ? JSON.parse(body) : {};
      const send = (status: number, payload: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      if (req.url === '/rerank') {
        const q = new Set(words(json.query));
        const results = (json.documents as string[]).map((d, index) => {
          const ws = words(d);
          const hit = ws.filter((w) => q.has(w)).length;
          return { index, relevance_score: hit / (ws.length + 1) };
        });
        return send(200, { results: results.sort((a, b) => b.relevance_score - a.relevance_score) });
      }
      const inputs: string[] = Array.isArray(json.input) ? json.input : [json.input];
      requests.push({
        path: req.url ?? '',
        inputs: inputs.length,
        ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
      });
      if (state.down) return send(503, { error: 'down for the test' });
      if (req.url === '/v1/embeddings')
        return send(200, {
          data: inputs.map((t, index) => ({ index, embedding: hashVector(t, json.dimensions ?? dims) })),
        });
      if (req.url === '/api/embed') return send(200, { embeddings: inputs.map((t) => hashVector(t, dims)) });
      send(404, { error: 'no such route' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get down() {
      return state.down;
    },
    set down(v: boolean) {
      state.down = v;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/**
 * `search.embedding` settings for the fake server's OpenAI protocol (`hash-<dims>`), polling and backing off fast
 * and never retrying, so a test sees each outcome at once.
 */
export function fakeEmbeddingSettings(fake: FakeEmbeddingServer, dims = 64, overrides: Record<string, unknown> = {}) {
  return {
    provider: 'openai',
    baseUrl: `${fake.url}/v1`,
    model: `hash-${dims}`,
    dimensions: dims,
    pollMs: 20,
    backoffMs: 20,
    maxBackoffMs: 200,
    retries: 0,
    batchSize: 4,
    ...overrides,
  };
}

/** Wait until at least `n` notes are embedded and nothing is queued; the counts, or an error with them. */

export async function waitEmbedded<C extends { embedded: number; queued: number }>(
  counts: () => Promise<C>,
  n: number,
  timeoutMs = 20_000,
): Promise<C> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const c = await counts();
    if (c.embedded >= n && c.queued === 0) return c;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`embedding did not finish: ${JSON.stringify(await counts())}`);
}
