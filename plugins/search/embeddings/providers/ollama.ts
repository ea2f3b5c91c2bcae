// Ollama embeddings through the `ollama` client (`POST {baseUrl}/api/embed`, batch input). The client
// gets a fetch bound to the configured URL; batching is the caller's, retries on 429/5xx are withRetry's.
// The client library loads on the first embed, so a server without embeddings never pays for it.
import type { EmbeddingSettings } from '../../settings.js';
import { boundFetch, withRetry } from '../http.js';
import { ProviderError, type EmbeddingProvider } from '../types.js';
import { checkDims, rethrowProvider } from './openai.js';

export function ollamaProvider(s: EmbeddingSettings): EmbeddingProvider {
  const host = s.baseUrl.replace(/\/+$/, '');
  return {
    name: 'ollama',
    model: s.model,
    dimensions: s.dimensions,
    async embed(texts, signal) {
      const { Ollama } = await import('ollama');
      return withRetry(
        async () => {
          const client = new Ollama({
            host,
            fetch: boundFetch(host, { timeoutMs: s.timeoutMs, signal }) as typeof fetch,
            ...(s.apiKey ? { headers: { authorization: `Bearer ${s.apiKey}` } } : {}),
          });
          const res = await client.embed({ model: s.model, input: [...texts], truncate: true }).catch(rethrowProvider);
          if (!Array.isArray(res?.embeddings) || res.embeddings.length !== texts.length)
            throw new ProviderError('malformed embeddings response', false);
          return res.embeddings.map((v) => checkDims(v, s.dimensions));
        },
        { retries: s.retries, backoffMs: s.backoffMs, signal },
      );
    },
  };
}
