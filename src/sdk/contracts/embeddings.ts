// The `embeddings` service contract: what the search family provides and other families (graph's
// find_related) consume, declared once here so neither re-declares or duck-types it. Declarations only.

export type Availability = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** Filters a nearest-notes query may apply (the search tools' folder, tags and frontmatter arguments). */
export interface NoteFilters {
  readonly folder?: string;
  readonly tags?: readonly string[];
  readonly frontmatter?: Readonly<Record<string, unknown>>;
}

export interface NearestNote {
  readonly noteId: number;
  readonly path: string;
  readonly title: string;
  /** Cosine similarity of the note's best chunk, 1 = identical. */
  readonly similarity: number;
  readonly sectionOrdinal: number;
  readonly headingPath: string;
  /** The best chunk's one-line preview; withheld (null) when the note changed since it was embedded. */
  readonly preview: string | null;
  readonly stale: boolean;
  readonly truncated: boolean;
}

export interface EmbeddingCounts {
  readonly embedded: number;
  readonly queued: number;
  readonly stale: number;
  readonly failing: number;
  readonly lastError: string | null;
}

/** The `embeddings` service (ref EMBEDDINGS). */
export interface EmbeddingsService {
  /** Whether semantic search can answer now, and why not. */
  availability(): Availability;
  /** Embed document texts (no query prefix). */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<number[][]>;
  /** Embed one query (the configured query prefix applied). */
  embedQuery(text: string, signal?: AbortSignal): Promise<number[]>;
  /** Notes nearest to a vector or to a note's own chunks (that note excluded), best first. */
  nearestNotes(
    vaultId: number,
    target: { vector: number[] } | { noteId: number },
    k: number,
    filters?: NoteFilters,
  ): Promise<NearestNote[]>;
  counts(vaultId: number): Promise<EmbeddingCounts>;
  /** Run one embedding pass now (tests, CLI); resolves with the notes embedded. */
  drain(maxPasses?: number): Promise<number>;
}
