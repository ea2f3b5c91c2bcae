// The search family's settings: one `search` config section, its JSON Schema with defaults, and the
// typed view handlers read. Every limit of the family is named here; nothing else holds a number.

export interface EmbeddingSettings {
  provider: 'none' | 'ollama' | 'openai';
  baseUrl: string;
  model: string;
  dimensions: number;
  apiKey: string;
  allowPlaintext: boolean;
  queryPrefix: string;
  batchSize: number;
  notesPerPass: number;
  pollMs: number;
  timeoutMs: number;
  retries: number;
  backoffMs: number;
  maxBackoffMs: number;
  chunkTokens: number;
  chunkOverlap: number;
  maxChunksPerNote: number;
}

export interface RerankSettings {
  url: string;
  model: string;
  apiKey: string;
  timeoutMs: number;
  allowPlaintext: boolean;
}

export interface RegexSettings {
  timeoutMs: number;
  maxLimit: number;
  maxMatchesPerFile: number;
  lineChars: number;
  maxFileBytes: number;
  batchFiles: number;
  readConcurrency: number;
  maxOutputChars: number;
}

export interface ConnectorSettings {
  results: number;
  fetchMaxChars: number;
  fetchMaxBytes: number;
  vaultName: string;
}

export interface SearchSettings {
  ftsConfigs: string[];
  rrfK: number;
  armDepth: number;
  lowConfidenceSimilarity: number;
  keywordCandidates: number;
  snippetRows: number;
  snippetChars: number;
  snippetScanChars: number;
  headChars: number;
  bodyChars: number;
  maxLimit: number;
  tagsMaxLimit: number;
  vectorIndex: 'auto' | 'exact' | 'hnsw' | 'quantized';
  hnswEfSearch: number;
  quantizedCandidates: number;
  quantizedExactBelow: number;
  embedding: EmbeddingSettings;
  rerank: RerankSettings;
  regex: RegexSettings;
  connector: ConnectorSettings;
}

export type SearchSettingsSection = { search: SearchSettings };

const int = (def: number, minimum = 0, maximum?: number) => ({ type: 'integer', minimum, ...(maximum ? { maximum } : {}), default: def });

export const searchSettingsSchema = {
  type: 'object',
  default: {},
  properties: {
    ftsConfigs: { type: 'array', items: { type: 'string', pattern: '^[a-z_][a-z0-9_]*$' }, minItems: 1, default: ['english'] },
    rrfK: int(60, 1),
    armDepth: int(50, 1, 200),
    lowConfidenceSimilarity: { type: 'number', minimum: 0, maximum: 1, default: 0 },
    keywordCandidates: int(400, 10),
    snippetRows: int(10, 0),
    snippetChars: int(240, 40, 2000),
    snippetScanChars: int(20000, 1000),
    headChars: int(160, 20, 1000),
    bodyChars: int(200000, 1000),
    maxLimit: int(50, 1, 200),
    tagsMaxLimit: int(500, 1, 10000),
    // auto: hnsw on server Postgres with pgvector ≥ 0.8, else quantized where pgvector ≥ 0.7 (embedded
    // PGlite), else exact (measured: README, Search operations).
    vectorIndex: { enum: ['auto', 'exact', 'hnsw', 'quantized'], default: 'auto' },
    // pgvector's hnsw.ef_search bounds (1–1000); higher = better recall, slower.
    hnswEfSearch: int(100, 1, 1000),
    // Chunks taken from the Hamming ranking per wanted note, then re-ranked exactly; higher = better recall, slower.
    quantizedCandidates: int(40, 1, 1000),
    // A filter leaving at most this many chunks is ranked exactly (it reads only those); 0 = never.
    quantizedExactBelow: int(2000, 0, 1_000_000),
    regex: {
      type: 'object',
      default: {},
      additionalProperties: false,
      properties: {
        timeoutMs: int(5000, 50, 120000),
        maxLimit: int(100, 1, 1000),
        maxMatchesPerFile: int(20, 1, 1000),
        lineChars: int(200, 40, 2000),
        maxFileBytes: int(2_000_000, 1000),
        batchFiles: int(64, 1, 10000),
        readConcurrency: int(8, 1, 64),
        maxOutputChars: int(40000, 1000, 400000),
      },
    },
    connector: {
      type: 'object',
      default: {},
      additionalProperties: false,
      properties: {
        results: int(10, 1, 50),
        fetchMaxChars: int(60000, 1000, 400000),
        fetchMaxBytes: int(20_000_000, 1000),
        vaultName: { type: 'string', default: '' },
      },
    },
    embedding: {
      type: 'object',
      default: {},
      additionalProperties: false,
      properties: {
        provider: { enum: ['none', 'ollama', 'openai'], default: 'none' },
        baseUrl: { type: 'string', default: '' },
        model: { type: 'string', default: '' },
        dimensions: int(0, 0, 4096),
        apiKey: { type: 'string', default: '' },
        allowPlaintext: { type: 'boolean', default: false },
        queryPrefix: { type: 'string', default: '' },
        batchSize: int(32, 1, 2048),
        notesPerPass: int(16, 1, 1000),
        pollMs: int(1000, 10),
        timeoutMs: int(30000, 100),
        retries: int(3, 0, 10),
        backoffMs: int(500, 1),
        maxBackoffMs: int(300000, 1),
        chunkTokens: int(512, 32, 8192),
        chunkOverlap: int(0, 0, 1024),
        maxChunksPerNote: int(64, 1, 10000),
      },
    },
    rerank: {
      type: 'object',
      default: {},
      additionalProperties: false,
      properties: {
        url: { type: 'string', default: '' },
        model: { type: 'string', default: 'jina-reranker-v2-base-multilingual' },
        apiKey: { type: 'string', default: '' },
        timeoutMs: int(5000, 100),
        allowPlaintext: { type: 'boolean', default: false },
      },
    },
  },
} as const;

/** Model defaults by provider, applied when `model`/`baseUrl`/`dimensions` are left empty. */
export function effectiveEmbedding(e: EmbeddingSettings): EmbeddingSettings {
  if (e.provider === 'ollama') {
    return { ...e, baseUrl: e.baseUrl || 'http://127.0.0.1:11434', model: e.model || 'bge-m3', dimensions: e.dimensions || 1024 };
  }
  if (e.provider === 'openai') {
    return { ...e, baseUrl: e.baseUrl || 'https://api.openai.com/v1', model: e.model || 'text-embedding-3-small', dimensions: e.dimensions || 1536 };
  }
  return e;
}
