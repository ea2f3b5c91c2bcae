// The embedding provider interface every provider implements; the `embeddings` service itself is the
// SDK's contract (re-exported here for the family's own modules). Declarations only.

export interface EmbeddingProvider {
  readonly name: 'ollama' | 'openai';
  readonly model: string;
  readonly dimensions: number;
  /** Embed texts in one request (the caller batches). Throws ProviderError on failure. */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<number[][]>;
}

export class ProviderError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

// The `embeddings` service contract is the SDK's (src/sdk/contracts/embeddings.ts), shared with its consumers.
export type {
  Availability,
  EmbeddingCounts,
  EmbeddingsService,
  NearestNote,
} from '../../../src/sdk/index.js';
