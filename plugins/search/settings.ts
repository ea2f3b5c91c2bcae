// The search family's settings: one `search` config section, its JSON Schema with defaults, and the
// typed view handlers read. Every limit of the family is named here; nothing else holds a number.
import type { SearchSettings } from '../../src/generated/search/settings.js';

// The section's shape is generated from searchSettingsSchema below (npm run gen): the two cannot drift.
export type { SearchSettings };
export type EmbeddingSettings = SearchSettings['embedding'];
export type RerankSettings = SearchSettings['rerank'];
export type RegexSettings = SearchSettings['regex'];
export type ConnectorSettings = SearchSettings['connector'];
export type RankingSettings = SearchSettings['ranking'];

export type SearchSettingsSection = { search: SearchSettings };

const int = (def: number, minimum = 0, maximum?: number) => ({
  type: 'integer',
  minimum,
  ...(maximum ? { maximum } : {}),
  default: def,
});

export const searchSettingsSchema = {
  type: 'object',
  default: {},
  properties: {
    ftsConfigs: {
      type: 'array',
      items: { type: 'string', pattern: '^[a-z_][a-z0-9_]*$' },
      minItems: 1,
      default: ['english'],
      description:
        'PostgreSQL text-search configurations; each note is indexed under all of them. A name the database lacks fails the family, listing the available ones; a changed list fails it until `exocortex search rebuild-keyword`.',
    },
    rrfK: { ...int(60, 1), description: 'Reciprocal-rank-fusion constant of hybrid_search.' },
    armDepth: {
      ...int(50, 1, 200),
      description: 'Rows taken from each arm (keyword, semantic) for fusion and rerank.',
    },
    lowConfidenceSimilarity: {
      type: 'number',
      minimum: 0,
      maximum: 1,
      default: 0,
      description:
        'hybrid_search says `confidence: low` when no keyword hit matched every term and the best similarity is under this (0 = off).',
    },
    keywordCandidates: {
      ...int(800, 10),
      description:
        'keyword_search: postings read per query from the rarest query terms (their notes are the candidates; the commoner terms only score them). Title, all-terms and exact-title hits are added; a result says candidates_capped when a broad query reached it.',
    },
    keywordRescore: {
      ...int(60, 10, 1000),
      description:
        'keyword_search: candidates (at least the page) whose vectors are read for BM25 term frequencies, the best by the rare terms they hold; higher is better recall on broad queries and slower.',
    },
    keywordMemory: {
      type: 'boolean',
      default: true,
      description:
        'keyword_search ranks over an in-memory index of the keyword vectors (per vault, loaded from the database after the first index pass, kept current from the rows each write stamps): exact BM25 statistics for every matching note, no vector read per candidate; 2–5x faster than the SQL path on most query kinds (docs/performance.md). Filtered queries rank here too; a query with -term, or one that arrives while the index loads, ranks in SQL. Costs memory (~14 MiB of postings per 10k notes, a few hundred MiB transient while loading); false ranks in SQL only, where a CJK term is found by reading the stored vectors, not the GIN index (~220–290 ms a query at 10k notes on PGlite against ~30 ms for other words).',
    },
    snippetRows: { ...int(10, 0), description: 'Results that get a highlighted snippet.' },
    snippetChars: { ...int(240, 40, 2000), description: 'Length of one snippet.' },
    snippetScanChars: { ...int(20000, 1000), description: 'Characters of a note scanned for the snippet.' },
    headChars: { ...int(160, 20, 1000), description: 'Opening characters of a note stored for results.' },
    bodyChars: { ...int(200000, 1000), description: 'Characters of a note indexed for keyword search.' },
    maxLimit: { ...int(50, 1, 200), description: "Upper bound on the search tools' limit." },
    tagsMaxLimit: { ...int(500, 1, 10000), description: "Upper bound on get_tags' limit." },
    vectorIndex: {
      enum: ['auto', 'exact', 'hnsw', 'quantized'],
      default: 'auto',
      description:
        'How semantic search finds the nearest chunks: `exact` (scan every vector), `hnsw` (pgvector HNSW index; PostgreSQL with pgvector ≥ 0.8), `quantized` (scan one bit per dimension, rank the best exactly; pgvector ≥ 0.7), `auto` (hnsw where it works, else quantized, else exact). A strategy that cannot work fails the family, saying why.',
    },
    hnswEfSearch: {
      ...int(100, 1, 1000),
      description: "pgvector's hnsw.ef_search for each HNSW query: higher is better recall and slower.",
    },
    quantizedCandidates: {
      ...int(40, 1, 1000),
      description:
        'quantized: chunks taken from the bit ranking per wanted note, then ranked by exact distance; higher is better recall and slower.',
    },
    quantizedExactBelow: {
      ...int(2000, 0, 1_000_000),
      description:
        'quantized: a filter leaving at most this many chunks is ranked by the exact scan instead, which reads only those (0 = never).',
    },
    ranking: {
      type: 'object',
      default: {},
      description: "keyword_search's ranking: BM25F over the keyword index, with the vault's term statistics.",
      additionalProperties: false,
      properties: {
        k1: {
          type: 'number',
          minimum: 0,
          maximum: 10,
          default: 1.2,
          description: "BM25 k1: how quickly repeats of a term stop adding to a note's score",
        },
        b: {
          type: 'number',
          minimum: 0,
          maximum: 1,
          default: 0.75,
          description:
            "BM25 b: how much a long note's body counts are discounted (0 none, 1 full; the title's are not); the textbook 0.75 (docs/performance.md)",
        },
        titleWeight: {
          type: 'number',
          minimum: 1,
          maximum: 100,
          default: 3,
          description: 'a title or alias occurrence counts as this many body occurrences before saturation',
        },
        allTermsFirst: {
          type: 'boolean',
          default: false,
          description: 'rank notes holding every query term above partial matches whatever their scores',
        },
        questionWords: {
          type: 'boolean',
          default: true,
          description: 'drop question words (what, how, my, notes, 如何 …) from queries that read as questions',
        },
        proximity: {
          type: 'number',
          minimum: 0,
          maximum: 10,
          default: 0,
          description:
            "term proximity (Tao & Zhai's α, 0 = off): the best 30 notes gain log(α + e^−d) − log α, d the fewest words between two query units; off: no better on the judged set and ~2x a question's time (docs/performance.md)",
        },
        feedbackDocs: {
          ...int(0, 0, 20),
          description:
            "pseudo-relevance feedback (RM3, 0 = off): notes of a question's first ranking whose words expand it; never for titles, phrases, OR or quotes; off: it lost questions on the judged set (docs/performance.md)",
        },
        feedbackTerms: { ...int(10, 1, 50), description: 'feedback: expansion terms kept' },
        feedbackWeight: {
          type: 'number',
          minimum: 0,
          maximum: 1,
          default: 0.5,
          description: "feedback: the original query's share of the score (RM3's λ), the expansion gets the rest",
        },
        feedbackMinTerms: {
          ...int(3, 1, 32),
          description: 'feedback: units of evidence (after stop and question words) a query needs to get it',
        },
      },
    },
    regex: {
      type: 'object',
      default: {},
      description: "search_regex's limits.",
      additionalProperties: false,
      properties: {
        timeoutMs: { ...int(5000, 50, 120000), description: 'search_regex: deadline of the whole call.' },
        maxLimit: { ...int(100, 1, 1000), description: 'search_regex: upper bound on limit (files returned).' },
        maxMatchesPerFile: { ...int(20, 1, 1000), description: 'search_regex: matching lines shown per file.' },
        lineChars: { ...int(200, 40, 2000), description: 'search_regex: characters shown around a match.' },
        maxFileBytes: {
          ...int(2_000_000, 1000),
          description: 'search_regex: larger notes match by path only (counted in skipped).',
        },
        batchFiles: { ...int(64, 1, 10000), description: 'search_regex: notes per worker batch.' },
        readConcurrency: { ...int(8, 1, 64), description: 'search_regex: parallel note reads.' },
        maxOutputChars: { ...int(40000, 1000, 400000), description: 'search_regex: output budget of one page.' },
      },
    },
    connector: {
      type: 'object',
      default: {},
      description: 'The connector pair (search, fetch) that ChatGPT-style clients call.',
      additionalProperties: false,
      properties: {
        results: { ...int(10, 1, 50), description: 'search (the connector tool): results returned.' },
        fetchMaxChars: {
          ...int(60000, 1000, 400000),
          description: 'fetch (the connector tool): text returned at most.',
        },
        fetchMaxBytes: { ...int(20_000_000, 1000), description: 'fetch: largest note read, in bytes.' },
        vaultName: {
          type: 'string',
          default: '',
          description: "Vault name in the connector's obsidian:// URLs (empty: vault.name).",
        },
      },
    },
    embedding: {
      type: 'object',
      default: {},
      description: "Embeddings for semantic and hybrid search (and graph's find_related).",
      additionalProperties: false,
      properties: {
        provider: {
          enum: ['none', 'ollama', 'openai'],
          default: 'none',
          description:
            'Embedding provider: `none` (semantic search off), `ollama`, or `openai` (any OpenAI-compatible endpoint).',
        },
        baseUrl: {
          type: 'string',
          default: '',
          description:
            'Provider endpoint (empty: http://127.0.0.1:11434 for ollama, https://api.openai.com/v1 for openai); must be https or loopback unless allowPlaintext.',
        },
        model: {
          type: 'string',
          default: '',
          description: 'Embedding model (empty: bge-m3 for ollama, text-embedding-3-small for openai).',
        },
        dimensions: {
          ...int(0, 0, 4096),
          description: 'Vector dimensions (0: the model default, 1024 for bge-m3, 1536 for text-embedding-3-small).',
        },
        apiKey: { type: 'string', default: '', description: 'API key sent to the provider.' },
        allowPlaintext: { type: 'boolean', default: false, description: 'Allow a non-loopback http:// baseUrl.' },
        queryPrefix: {
          type: 'string',
          default: '',
          description: 'Text put before queries only (some models want e.g. "query: ").',
        },
        batchSize: { ...int(32, 1, 2048), description: 'Chunks per embedding request.' },
        notesPerPass: { ...int(16, 1, 1000), description: 'Notes embedded per background pass.' },
        pollMs: { ...int(1000, 10), description: 'Pause between background passes when the queue is empty.' },
        timeoutMs: { ...int(30000, 100), description: 'Deadline of one provider request.' },
        retries: { ...int(3, 0, 10), description: 'Retries of a request answered 429 or 5xx.' },
        backoffMs: { ...int(500, 1), description: 'First per-note backoff after a failed pass (doubles each time).' },
        maxBackoffMs: { ...int(300000, 1), description: 'Longest per-note backoff.' },
        chunkTokens: {
          ...int(512, 32, 8192),
          description: 'Tokens per chunk (part of the model fingerprint: changing it re-embeds).',
        },
        chunkOverlap: { ...int(0, 0, 1024), description: 'Tokens shared by neighbouring chunks.' },
        maxChunksPerNote: { ...int(64, 1, 10000), description: 'Most chunks embedded per note.' },
      },
    },
    rerank: {
      type: 'object',
      default: {},
      description: 'Optional reranking of hybrid_search results, for calls that ask for rerank.',
      additionalProperties: false,
      properties: {
        url: { type: 'string', default: '', description: 'Rerank endpoint (Jina-compatible); empty: no rerank.' },
        model: { type: 'string', default: 'jina-reranker-v2-base-multilingual', description: 'Rerank model.' },
        apiKey: { type: 'string', default: '', description: 'API key sent to the rerank endpoint.' },
        timeoutMs: {
          ...int(5000, 100),
          description: 'Deadline of one rerank request; past it the fused order is kept.',
        },
        allowPlaintext: { type: 'boolean', default: false, description: 'Allow a non-loopback http:// rerank url.' },
      },
    },
  },
} as const;

/** Model defaults by provider, applied when `model`/`baseUrl`/`dimensions` are left empty. */
export function effectiveEmbedding(e: EmbeddingSettings): EmbeddingSettings {
  if (e.provider === 'ollama') {
    return {
      ...e,
      baseUrl: e.baseUrl || 'http://127.0.0.1:11434',
      model: e.model || 'bge-m3',
      dimensions: e.dimensions || 1024,
    };
  }
  if (e.provider === 'openai') {
    return {
      ...e,
      baseUrl: e.baseUrl || 'https://api.openai.com/v1',
      model: e.model || 'text-embedding-3-small',
      dimensions: e.dimensions || 1536,
    };
  }
  return e;
}
