// Shapes shared by the index pipeline's modules: settings, dependencies, in-memory state and the
// status it reports. Declarations only; never does I/O.
import type { Kysely } from 'kysely';
import type { NoteModel } from '../../markdown/index.js';
import type { IndexContributor, Logger, VaultHandle, WorkerPool } from '../../sdk/types.js';
import type { IndexStatus } from '../../sdk/index-service.js';

export interface IndexSettings {
  /** Subscribe to filesystem events (off: reconcile passes and write-through only). */
  readonly watch: boolean;
  /** Quiet time after the last watcher event before the changed paths are indexed. */
  readonly debounceMs: number;
  /** Seconds between reconcile passes (0 = only the initial pass). */
  readonly reconcileSeconds: number;
  /** Notes larger than this are quarantined, never read whole. */
  readonly maxNoteBytes: number;
  /** Notes committed per database transaction. */
  readonly batchSize: number;
  /** Notes per worker parse task. */
  readonly parseTaskSize: number;
  /** Batches read and parsed ahead of the one being written. */
  readonly prefetchBatches: number;
  /** Concurrent file reads within a batch. */
  readonly readConcurrency: number;
  /** Write-through notes up to this size are parsed on the calling thread, larger ones in the pool. */
  readonly inlineParseMaxBytes: number;
  /** Write-through: deferred contributors' rows in a second transaction, after the caller is answered. */
  readonly deferredWrites: boolean;
  /**
   * Longest the deferred rows of a write-through wait before their transaction, so that a note written
   * again meanwhile is derived once (0 = right after each batch). settled() writes them at once.
   */
  readonly deferredDelayMs: number;
  /**
   * Longest a write-through commit waits for the other write calls in flight on the vault to hand over
   * their notes, so they share one transaction (0 = commit at once). Ends early when all have.
   */
  readonly groupCommitWaitMs: number;
}

/** Write-class tool calls in flight per vault, with a signal when any count changes (the host's admission). */
export interface WriteCallCounter {
  inFlight(vaultId: number): number;
  subscribe(listener: () => void): () => void;
}

export interface ContributorEntry {
  readonly family: string;
  readonly contributor: IndexContributor<NoteModel>;
}

export interface PipelineDeps {
  readonly db: Kysely<any>;
  readonly vault: VaultHandle;
  readonly workers: WorkerPool;
  readonly log: Logger;
  readonly settings: IndexSettings;
  /** Write calls in flight (absent: group commit never waits, e.g. the CLI's index pass). */
  readonly writeCalls?: WriteCallCounter;
  /** The contributors of the families serving now (called per batch, so hot reloads are seen). */
  readonly contributors: () => readonly ContributorEntry[];
  readonly now?: () => Date;
  /**
   * Runs first in every index transaction of this vault; a throw aborts it. Several processes on one
   * PostgreSQL server pass the lease check (cluster/leases.ts checkFence), so a deposed owner's commit fails.
   */
  readonly fence?: (trx: Kysely<any>) => Promise<void>;
  /** Whether another process served this vault before this one (its scan is a catch-up; see IndexStatus). */
  readonly resumed?: () => boolean;
}

/** What the index holds for one note (mirrors its `notes` row). */
export interface CachedNote {
  readonly id: number;
  readonly hash: string;
  readonly size: number;
  /** Whole milliseconds (the row's mtime). */
  readonly mtimeMs: number;
}

export interface QuarantinedNote {
  readonly reason: string;
  readonly hash: string | null;
  readonly size: number;
  readonly mtimeMs: number;
}

export type WatcherState = 'off' | 'starting' | 'watching' | 'failed';

export interface PipelineStatus extends IndexStatus {
  readonly watcher: WatcherState;
  /** Why the watcher failed (reconcile passes still run), if it did. */
  readonly watcherError?: string;
  /** The most recent failure, without paths. */
  readonly lastError?: string;
}

/** The stable key of a contributor in state rows and backlog counts. */
export function contributorKey(entry: ContributorEntry): string {
  return `${entry.family}/${entry.contributor.name}`;
}

/**
 * Tell each contributor that an index transaction of `vaultId` committed (IndexContributor.committed);
 * a contributor's throw goes to `failed` and the others are still told.
 */
export function announceCommit(
  entries: readonly ContributorEntry[],
  vaultId: number,
  failed: (what: string, err: unknown) => void,
): void {
  for (const { contributor } of entries) {
    if (!contributor.committed) continue;
    try {
      contributor.committed(vaultId);
    } catch (e) {
      failed(`contributor ${contributor.name} failed after a commit`, e);
    }
  }
}

/** A vault-relative path with a segment that starts with a dot (`.obsidian/…`, `a/.git/…`): never indexed or watched. */
export const DOT_SEGMENT = /(?:^|\/)\./;

export function isNotePath(p: string): boolean {
  return p.endsWith('.md') && !DOT_SEGMENT.test(p);
}
