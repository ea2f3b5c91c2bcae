// OpenAI-compatible embeddings (`POST {baseUrl}/embeddings`): any endpoint speaking that protocol.
// Spoken over fetch; batching is the caller's, retries on 429/5xx are postJson's.
import type { EmbeddingSettings } from '../../settings.js';
import { postJson } from '../http.js';
import { ProviderError, type EmbeddingProvider } from '../types.js';

interface OpenAiResponse {
  data: Array<{ index: number; embedding: number[] }>;
}

export function openAiProvider(s: EmbeddingSettings): EmbeddingProvider {
  const url = `${s.baseUrl.replace(/\/+$/, '')}/embeddings`;
  return {
    name: 'openai',
    model: s.model,
    dimensions: s.dimensions,
    async embed(texts, signal) {
      const body: Record<string, unknown> = { model: s.model, input: texts, encoding_format: 'float' };
      if (s.dimensions) body.dimensions = s.dimensions;
      const res = await postJson<OpenAiResponse>(url, body, {
        headers: s.apiKey ? { authorization: `Bearer ${s.apiKey}` } : {},
        timeoutMs: s.timeoutMs,
        retries: s.retries,
        backoffMs: s.backoffMs,
        signal,
      });
      if (!Array.isArray(res?.data) || res.data.length !== texts.length) throw new ProviderError('malformed embeddings response', false);
      return [...res.data].sort((a, b) => a.index - b.index).map((d) => checkDims(d.embedding, s.dimensions));
    },
  };
}

export function checkDims(v: number[], dims: number): number[] {
  if (!Array.isArray(v) || (dims && v.length !== dims)) throw new ProviderError(`the provider returned ${Array.isArray(v) ? v.length : 'no'} dimensions, configured ${dims}`, false);
  return v;
}
