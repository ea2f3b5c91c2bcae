// The `embeddings` service: provider selection, the fingerprint check at boot, the background loop
// that drains search_embed_queue in batches (old vectors stay until new ones land; failures back off),
// and nearest-note queries. Never runs on a tool's request path except to embed the query itself.
import { sql } from 'kysely';
import { bigintArray, type Database, type ServiceFactoryContext } from '../../../src/sdk/index.js';
import { effectiveEmbedding, type EmbeddingSettings, type SearchSettings } from '../settings.js';
import { chunkNote, type ChunkTaskInput, type ChunkTaskOutput } from './chunk-task.js';
import { urlProblem } from './http.js';
import { ollamaProvider } from './providers/ollama.js';
import { openAiProvider } from './providers/openai.js';
import type { Availability, EmbeddingCounts, EmbeddingProvider, EmbeddingsService, NearestNote } from './types.js';
import { toVectorLiteral, type VectorSearch, type VectorStrategy } from './vector-search.js';
import { chooseVectorIndex, pgvectorVersion, vectorSearchFor } from './vector-search-choice.js';
import { syncHnswIndex } from './vector-search-hnsw.js';
import { syncChunkBits } from './vector-search-quantized.js';

const PREVIEW_CHARS = 160;

export function embeddingFingerprint(e: EmbeddingSettings): Record<string, unknown> {
  return {
    provider: e.provider,
    model: e.model,
    dimensions: e.dimensions,
    chunkTokens: e.chunkTokens,
    chunkOverlap: e.chunkOverlap,
    maxChunksPerNote: e.maxChunksPerNote,
  };
}

export async function hasVectorTable(db: Database): Promise<boolean> {
  const r = await sql<{ t: string | null }>`SELECT to_regclass('search_chunks')::text AS t`.execute(db);
  return !!r.rows[0]?.t;
}

/** Boot check: stored vectors must come from the configured provider, model, dimensions and chunking. */
export async function checkEmbeddingFingerprint(db: Database, e: EmbeddingSettings): Promise<void> {
  const want = embeddingFingerprint(e);
  const r = await sql<{
    value: Record<string, unknown>;
  }>`SELECT value FROM search_meta WHERE key = 'embedding'`.execute(db);
  const stored = r.rows[0]?.value;
  if (stored && canonical(stored) === canonical(want)) return;
  const any = await sql<{ n: number }>`SELECT count(*)::int AS n FROM (SELECT 1 FROM search_chunks LIMIT 1) s`.execute(
    db,
  );
  if (stored && (any.rows[0]?.n ?? 0) > 0) {
    throw new Error(
      `the stored embeddings were made with ${canonical(stored)} but the configuration now says ${canonical(want)}; ` +
        'run `exocortex search reset-embeddings` (drops the vectors and queues every note again), or restore the previous settings',
    );
  }
  await sql`INSERT INTO search_meta (key, value) VALUES ('embedding', ${JSON.stringify(want)}::jsonb)
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`.execute(db);
}

/** Drop every vector and its fingerprint, and queue every note again. */
export async function resetEmbeddings(db: Database): Promise<number> {
  return db.transaction().execute(async (trx) => {
    if (await hasVectorTable(trx)) await sql`DELETE FROM search_chunks`.execute(trx);
    await sql`DELETE FROM search_embedded_notes`.execute(trx);
    await sql`DELETE FROM search_meta WHERE key = 'embedding'`.execute(trx);
    return reembedAll(trx);
  });
}

/** Queue every note for embedding again, keeping the current vectors until replacements land. */
export async function reembedAll(db: Database, vaultId?: number): Promise<number> {
  const only = vaultId === undefined ? sql`` : sql`WHERE n.vault_id = ${vaultId}`;
  const r = await sql`INSERT INTO search_embed_queue (note_id, vault_id, content_hash)
      SELECT n.id, n.vault_id, n.content_hash FROM notes n JOIN search_keyword k ON k.note_id = n.id ${only}
      ON CONFLICT (note_id) DO UPDATE SET content_hash = EXCLUDED.content_hash, attempts = 0, next_attempt_at = now(), last_error = NULL`.execute(
    db,
  );
  return Number(r.numAffectedRows ?? 0);
}

/**
 * Queue every indexed note whose content has no vectors and is not queued at that content. The keyword contributor
 * queues nothing while no provider is configured, so a start with one (the first, or the first after a spell
 * without) finds here what it has to embed; otherwise this queues only what a lost write left out. A queued note
 * whose content changed meanwhile is queued again at its new content, its backoff cleared. Idempotent, so processes
 * on one PostgreSQL server may run it at once.
 */
export async function queueUnembedded(db: Database): Promise<number> {
  const r = await sql`INSERT INTO search_embed_queue (note_id, vault_id, content_hash)
      SELECT n.id, n.vault_id, n.content_hash FROM notes n JOIN search_keyword k ON k.note_id = n.id
      WHERE NOT EXISTS (SELECT 1 FROM search_embedded_notes e WHERE e.note_id = n.id AND e.content_hash = n.content_hash)
      ON CONFLICT (note_id) DO UPDATE SET content_hash = EXCLUDED.content_hash, enqueued_at = now(), attempts = 0,
        next_attempt_at = now(), last_error = NULL
      WHERE search_embed_queue.content_hash <> EXCLUDED.content_hash`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

export function createProvider(e: EmbeddingSettings): EmbeddingProvider | undefined {
  if (e.provider === 'openai') return openAiProvider(e);
  if (e.provider === 'ollama') return ollamaProvider(e);
  return undefined;
}

interface QueueRow {
  note_id: string;
  vault_id: number;
  content_hash: string;
  attempts: number;
  path: string | null;
}

export class EmbeddingWorker implements EmbeddingsService {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private stopped = false;
  private lastError: string | null = null;
  private inlineChunking = false;
  readonly settings: EmbeddingSettings;
  readonly vectors: VectorSearch;

  constructor(
    private readonly ctx: ServiceFactoryContext,
    search: SearchSettings,
    private readonly provider: EmbeddingProvider | undefined,
    private readonly unavailable: string | undefined,
    strategy: VectorStrategy = 'exact',
  ) {
    this.settings = effectiveEmbedding(search.embedding);
    this.vectors = vectorSearchFor(ctx.db, strategy, {
      dims: this.settings.dimensions,
      maxChunksPerNote: this.settings.maxChunksPerNote,
      efSearch: search.hnswEfSearch,
      quantizedCandidates: search.quantizedCandidates,
      quantizedExactBelow: search.quantizedExactBelow,
    });
  }

  availability(): Availability {
    return this.unavailable ? { ok: false, reason: this.unavailable } : { ok: true };
  }

  start(): void {
    if (!this.provider || this.unavailable) return;
    const tick = async (): Promise<void> => {
      if (this.stopped) return;
      await this.drain(1).catch((e) => this.ctx.log.warn({ err: String(e) }, 'embedding pass failed'));
      if (!this.stopped) this.timer = setTimeout(() => void tick(), this.settings.pollMs).unref();
    };
    this.timer = setTimeout(() => void tick(), 0).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<number[][]> {
    if (!this.provider || this.unavailable) throw new Error(this.unavailable ?? 'no embedding provider configured');
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += this.settings.batchSize)
      out.push(...(await this.provider.embed(texts.slice(i, i + this.settings.batchSize), signal)));
    return out;
  }

  async embedQuery(text: string, signal?: AbortSignal): Promise<number[]> {
    const [v] = await this.embed([this.settings.queryPrefix + text], signal);
    return v;
  }

  nearestNotes(
    vaultId: number,
    target: { vector: number[] } | { noteId: number },
    k: number,
    filters = {},
  ): Promise<NearestNote[]> {
    return this.vectors.nearest(vaultId, 'vector' in target ? target.vector : target, k, filters);
  }

  async counts(vaultId: number): Promise<EmbeddingCounts> {
    const vectors = !this.unavailable || (await hasVectorTable(this.ctx.db));
    const r = await sql<{ embedded: number; queued: number; stale: number; failing: number; err: string | null }>`
      SELECT (SELECT count(*)::int FROM search_embedded_notes WHERE vault_id = ${vaultId}) AS embedded,
             (SELECT count(*)::int FROM search_embed_queue WHERE vault_id = ${vaultId}) AS queued,
             (SELECT count(*)::int FROM search_embedded_notes e JOIN notes n ON n.id = e.note_id
                WHERE e.vault_id = ${vaultId} AND e.content_hash <> n.content_hash) AS stale,
             (SELECT count(*)::int FROM search_embed_queue WHERE vault_id = ${vaultId} AND attempts > 0) AS failing,
             (SELECT last_error FROM search_embed_queue WHERE vault_id = ${vaultId} AND last_error IS NOT NULL
                ORDER BY next_attempt_at DESC LIMIT 1) AS err`.execute(this.ctx.db);
    const row = r.rows[0];
    return {
      embedded: vectors ? row.embedded : 0,
      queued: row.queued,
      stale: row.stale,
      failing: row.failing,
      lastError: row.err ?? this.lastError,
    };
  }

  /** Run up to `maxPasses` passes (each ≤ notesPerPass notes); one at a time. */
  drain(maxPasses = Number.POSITIVE_INFINITY): Promise<number> {
    const previous = this.running ?? Promise.resolve(0);
    const next = previous
      .catch(() => 0)
      .then(async () => {
        let total = 0;
        for (let i = 0; i < maxPasses; i++) {
          const n = await this.pass();
          total += n;
          if (n === 0) break;
        }
        return total;
      });
    this.running = next;
    return next;
  }

  private async pass(): Promise<number> {
    if (!this.provider || this.unavailable) return 0;
    const db = this.ctx.db;
    // Only the rows of the vaults served here: another process embeds its own vaults' notes, and a row this
    // process cannot read must not be backed off for it (that would delay the owner's embedding by minutes).
    const serving = this.ctx.servingVaults();
    if (!serving.length) return 0;
    const due = await sql<QueueRow>`
      SELECT q.note_id, q.vault_id, q.content_hash, q.attempts, n.path
      FROM search_embed_queue q LEFT JOIN notes n ON n.id = q.note_id
      WHERE q.next_attempt_at <= now() AND q.vault_id = ANY(${bigintArray(serving)})
      ORDER BY q.enqueued_at, q.note_id LIMIT ${this.settings.notesPerPass}`.execute(db);
    if (!due.rows.length) return 0;
    const prepared: Array<{ row: QueueRow; hash: string; out: ChunkTaskOutput }> = [];
    for (const row of due.rows) {
      if (!row.path) {
        await sql`DELETE FROM search_embed_queue WHERE note_id = ${row.note_id}`.execute(db);
        continue;
      }
      try {
        const fs = this.ctx.vault(row.vault_id).fs;
        const bytes = await fs.readBytes(row.path);
        const input: ChunkTaskInput = {
          text: bytes.toString('utf8'),
          path: row.path,
          chunkTokens: this.settings.chunkTokens,
          chunkOverlap: this.settings.chunkOverlap,
          maxChunks: this.settings.maxChunksPerNote,
          previewChars: PREVIEW_CHARS,
        };
        const out = await this.chunk(input);
        prepared.push({ row, hash: fs.contentHash(bytes), out });
      } catch (e) {
        // The vault left this process meanwhile (standby, root gone): its row waits for whoever serves it.
        if (!this.ctx.servingVaults().includes(row.vault_id)) continue;
        await this.backoff([row], `reading the note failed: ${describe(e)}`);
      }
    }
    const texts = prepared.flatMap((p) => p.out.chunks.map((c) => c.text));
    let vectors: number[][];
    try {
      vectors = await this.embed(texts);
      this.lastError = null;
    } catch (e) {
      this.lastError = e instanceof Error ? e.message : String(e);
      await this.backoff(
        prepared.map((p) => p.row),
        this.lastError,
      );
      return 0;
    }
    let at = 0;
    const fingerprint = JSON.stringify(embeddingFingerprint(this.settings));
    const wrote = await db.transaction().execute(async (trx) => {
      // Vectors land only under this worker's own fingerprint (a reset may have cleared it meanwhile).
      await sql`INSERT INTO search_meta (key, value) VALUES ('embedding', ${fingerprint}::jsonb) ON CONFLICT (key) DO NOTHING`.execute(
        trx,
      );
      const current = await sql<{ value: unknown }>`SELECT value FROM search_meta WHERE key = 'embedding'`.execute(trx);
      if (canonical(current.rows[0]?.value) !== canonical(JSON.parse(fingerprint))) return false;
      for (const p of prepared) {
        const id = p.row.note_id;
        await sql`DELETE FROM search_chunks WHERE note_id = ${id}`.execute(trx);
        const values = p.out.chunks.map(
          (c) =>
            sql`(${id}, ${p.row.vault_id}, ${c.ordinal}, ${c.sectionOrdinal}, ${c.headingPath}, ${c.preview}, ${p.hash}, ${toVectorLiteral(vectors[at++])}::vector)`,
        );
        if (values.length) {
          await sql`INSERT INTO search_chunks (note_id, vault_id, ordinal, section_ordinal, heading_path, preview, content_hash, embedding)
            VALUES ${sql.join(values)}`.execute(trx);
        }
        await sql`INSERT INTO search_embedded_notes (note_id, vault_id, content_hash, chunk_count, truncated)
          VALUES (${id}, ${p.row.vault_id}, ${p.hash}, ${values.length}, ${p.out.truncated})
          ON CONFLICT (note_id) DO UPDATE SET content_hash = EXCLUDED.content_hash, chunk_count = EXCLUDED.chunk_count,
            truncated = EXCLUDED.truncated, embedded_at = now()`.execute(trx);
        // A newer version queued meanwhile (different hash) stays queued.
        await sql`DELETE FROM search_embed_queue WHERE note_id = ${id} AND (content_hash = ${p.hash} OR content_hash = ${p.row.content_hash})`.execute(
          trx,
        );
      }
      return true;
    });
    if (!wrote) {
      this.stopped = true;
      this.ctx.log.warn(
        {},
        'search: the stored embedding fingerprint belongs to another configuration; this embedding worker stops',
      );
      return 0;
    }
    return prepared.length;
  }

  /**
   * Chunk in the worker pool; if the pool cannot load this module (seen under tsx, where worker
   * threads lack the TypeScript loader), chunk inline: it is the background loop, not a request.
   */
  private async chunk(input: ChunkTaskInput): Promise<ChunkTaskOutput> {
    if (!this.inlineChunking) {
      try {
        const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
        return await this.ctx.workers.run<ChunkTaskOutput>(
          { module: new URL(`./chunk-task${ext}`, import.meta.url).href, fn: 'chunkNote' },
          input,
          { lane: 'bulk' },
        );
      } catch (e) {
        if ((e as { code?: string })?.code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw e;
        this.inlineChunking = true;
        this.ctx.log.warn(
          { err: describe(e) },
          'search: the worker pool cannot load the chunking module; chunking inline',
        );
      }
    }
    return chunkNote(input);
  }

  private async backoff(rows: QueueRow[], error: string): Promise<void> {
    for (const row of rows) {
      const delay = Math.min(this.settings.maxBackoffMs, this.settings.backoffMs * 2 ** Math.min(row.attempts, 20));
      await sql`UPDATE search_embed_queue SET attempts = attempts + 1, last_error = ${error.slice(0, 500)},
        next_attempt_at = now() + make_interval(secs => ${delay / 1000}) WHERE note_id = ${row.note_id}`.execute(
        this.ctx.db,
      );
    }
  }
}

/**
 * Service factory: decide availability, check the fingerprint (throws on mismatch), pick the vector
 * strategy for this engine (throws when an explicit `hnsw` or `quantized` cannot work) and bring its
 * index or bits table in line, start the loop.
 */
export async function createEmbeddingsService(ctx: ServiceFactoryContext): Promise<EmbeddingWorker> {
  const search = (ctx.settings as { search: SearchSettings }).search;
  const e = effectiveEmbedding(search.embedding);
  let unavailable: string | undefined;
  let provider: EmbeddingProvider | undefined;
  let strategy: VectorStrategy = 'exact';
  if (e.provider === 'none') unavailable = 'no embedding provider configured';
  else {
    const vectors = await hasVectorTable(ctx.db);
    const choice = chooseVectorIndex(
      search.vectorIndex,
      ctx.server.databaseEngine,
      vectors ? await pgvectorVersion(ctx.db) : null,
      e.dimensions,
    );
    if ('refuse' in choice) throw new Error(choice.refuse);
    const problem = urlProblem(e.baseUrl, e.allowPlaintext);
    if (!vectors) unavailable = 'pgvector is not installed in this database';
    else if (problem) unavailable = `embedding URL refused: ${problem}`;
    else {
      await checkEmbeddingFingerprint(ctx.db, e);
      strategy = choice.strategy;
      ctx.log.info({ strategy, reason: choice.reason }, 'search: vector search strategy');
      await syncHnswIndex(ctx.db, ctx.log, strategy === 'hnsw' ? e.dimensions : null);
      await syncChunkBits(ctx.db, ctx.log, strategy === 'quantized');
      provider = createProvider(e);
    }
  }
  const worker = new EmbeddingWorker(ctx, search, provider, unavailable, strategy);
  worker.start();
  // In the background: an anti-join over every note, which grows with the vault and which the family's start need
  // not wait for; the loop finds the rows at its next poll.
  if (provider)
    void queueUnembedded(ctx.db).then(
      (queued) => queued > 0 && ctx.log.info({ queued }, 'search: notes queued for embedding at start'),
      (err: unknown) => ctx.log.warn({ err: describe(err) }, 'search: queueing the notes without vectors failed'),
    );
  return worker;
}

function describe(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (typeof e === 'object' && e !== null && 'message' in e) return String((e as { message: unknown }).message);
  try {
    return JSON.stringify(e);
  } catch {
    return String(e);
  }
}

/** JSON with sorted keys: jsonb reorders keys, so fingerprints compare in this form. */
export function canonical(value: unknown): string {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}
