// Ollama embeddings (`POST {baseUrl}/api/embed`, batch input). Spoken over fetch; batching is the
// caller's, retries on 429/5xx are postJson's.
import type { EmbeddingSettings } from '../../settings.js';
import { postJson } from '../http.js';
import { ProviderError, type EmbeddingProvider } from '../types.js';
import { checkDims } from './openai.js';

export function ollamaProvider(s: EmbeddingSettings): EmbeddingProvider {
  const url = `${s.baseUrl.replace(/\/+$/, '')}/api/embed`;
  return {
    name: 'ollama',
    model: s.model,
    dimensions: s.dimensions,
    async embed(texts, signal) {
      const res = await postJson<{ embeddings: number[][] }>(url, { model: s.model, input: texts, truncate: true }, {
        timeoutMs: s.timeoutMs,
        retries: s.retries,
        backoffMs: s.backoffMs,
        signal,
      });
      if (!Array.isArray(res?.embeddings) || res.embeddings.length !== texts.length) throw new ProviderError('malformed embeddings response', false);
      return res.embeddings.map((v) => checkDims(v, s.dimensions));
    },
  };
}
