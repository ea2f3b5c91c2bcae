// OpenAI-compatible embeddings through the `openai` client (`POST {baseUrl}/embeddings`): any endpoint
// speaking that protocol. The client gets a fetch bound to the configured URL, no environment
// fallbacks and no retries of its own; batching is the caller's, retries on 429/5xx are withRetry's.
// The client library (about 200 modules) loads on the first embed, so a server without embeddings never pays for it.
import type { EmbeddingSettings } from '../../settings.js';
import { boundFetch, withRetry } from '../http.js';
import { ProviderError, type EmbeddingProvider } from '../types.js';

export function openAiProvider(s: EmbeddingSettings): EmbeddingProvider {
  const baseURL = s.baseUrl.replace(/\/+$/, '');
  return {
    name: 'openai',
    model: s.model,
    dimensions: s.dimensions,
    async embed(texts, signal) {
      const { default: OpenAI } = await import('openai');
      return withRetry(
        async () => {
          const client = new OpenAI({
            // The client insists on a key; with none configured its header is stripped before sending.
            apiKey: s.apiKey || 'unused',
            baseURL,
            organization: null,
            project: null,
            adminAPIKey: null,
            webhookSecret: null,
            maxRetries: 0,
            timeout: s.timeoutMs,
            logLevel: 'off',
            fetch: boundFetch(baseURL, { timeoutMs: s.timeoutMs, signal, stripAuthorization: !s.apiKey }),
          });
          const res = await client.embeddings
            .create(
              {
                model: s.model,
                input: [...texts],
                encoding_format: 'float',
                ...(s.dimensions ? { dimensions: s.dimensions } : {}),
              },
              { signal },
            )
            .catch(rethrowProvider);
          if (!Array.isArray(res?.data) || res.data.length !== texts.length)
            throw new ProviderError('malformed embeddings response', false);
          return [...res.data].sort((a, b) => a.index - b.index).map((d) => checkDims(d.embedding, s.dimensions));
        },
        { retries: s.retries, backoffMs: s.backoffMs, signal },
      );
    },
  };
}

/** Unwrap the ProviderError a client library wrapped (connection errors carry it as `cause`). */
export function rethrowProvider(e: unknown): never {
  if (e instanceof ProviderError) throw e;
  const cause = (e as { cause?: unknown })?.cause;
  if (cause instanceof ProviderError) throw cause;
  throw new ProviderError(e instanceof Error ? e.message : String(e), false);
}

export function checkDims(v: number[], dims: number): number[] {
  if (!Array.isArray(v) || (dims && v.length !== dims))
    throw new ProviderError(
      `the provider returned ${Array.isArray(v) ? v.length : 'no'} dimensions, configured ${dims}`,
      false,
    );
  return v;
}
