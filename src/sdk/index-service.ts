// The index service as families see it (`requires: ['index']`): write-through after our own writes,
// status for "still catching up" answers. The host's pipeline (src/host/index) implements it.
import type { ChangeOrigin } from './types.js';

export interface IndexStatus {
  /** Files seen by the last scan (markdown notes only). */
  readonly scanned: number;
  readonly indexed: number;
  readonly quarantined: number;
  /** Notes waiting to be (re)indexed. */
  readonly pending: number;
  /** Per contributor: rows still to re-derive after a version bump. */
  readonly backlog: Readonly<Record<string, number>>;
  /** True once the initial scan has completed. */
  readonly ready: boolean;
  /**
   * This process took the vault over from another one that served it before (several processes on one
   * PostgreSQL server): its initial scan is a catch-up, never a first build, so a note first seen now is new.
   */
  readonly resumed?: boolean;
  /** ISO times: last completed pass (heartbeat), last change detected. */
  readonly lastPassAt: string | null;
  readonly lastChangeAt: string | null;
  readonly failures: number;
}

export interface IndexService {
  /**
   * Our own tool wrote `path` (created or replaced): index it now, inside the call, so the caller's
   * next read or search sees it. Resolves once the notes row and every contributor's rows are committed.
   */
  noteWritten(vaultId: number, path: string, origin?: ChangeOrigin): Promise<void>;
  /** Our own tool deleted or trashed `path`. */
  noteRemoved(vaultId: number, path: string, origin?: ChangeOrigin): Promise<void>;
  /** Our own tool moved `from` to `to` (contributors receive a rename, not a delete + create). */
  noteMoved(vaultId: number, from: string, to: string, origin?: ChangeOrigin): Promise<void>;
  /**
   * Our own tool is about to change `paths` on disk (a rename): until the returned release is called, index
   * passes leave these paths to the write-through that follows (noteMoved), so a pass that reads the disk
   * between the rename and the write-through cannot record our move as an outside removal and creation.
   * Release once the write-through resolved, or the change failed; a path a pass left meanwhile is indexed
   * again then.
   */
  hold(vaultId: number, paths: readonly string[]): () => void;
  /**
   * Resolves once the deferred rows (see IndexContributor.deferred) of every write-through that has
   * returned are committed; rows waiting out index.deferredDelayMs are written at once. Readers of a
   * deferred contributor's rows await it before they query.
   */
  settled(vaultId: number): Promise<void>;
  status(vaultId: number): IndexStatus;
  /** Resolves when the initial scan is done (or the timeout passes); for tests and CLI. */
  whenReady(vaultId: number, timeoutMs?: number): Promise<boolean>;
}

/** How far the index is behind the vault, for answers that may be incomplete because of it. */
export interface IndexLag {
  /** Notes known or likely to be missing from the index (queued, or not reached by the first scan). */
  readonly pending: number;
  readonly indexed: number;
  /** Notes the scan has seen so far; null while the first scan has not counted the vault yet. */
  readonly scanned: number | null;
  /** One sentence for the tool's text: what is missing and that the answer may be incomplete. */
  readonly notice: string;
}

/**
 * The lag behind an answer, or undefined when the index has caught up. Every tool that answers from the
 * index says it the same way (text and structuredContent.index_pending), so agents can learn one signal.
 */
export function indexLag(status: IndexStatus): IndexLag | undefined {
  if (status.ready && status.pending === 0) return undefined;
  const firstScan = !status.ready;
  const counted = firstScan && status.scanned > status.indexed ? status.scanned : null;
  const pending = firstScan ? Math.max(status.pending, (counted ?? status.indexed) - status.indexed) : status.pending;
  const notice = firstScan
    ? counted === null
      ? `The index is still being built (${status.indexed} notes indexed so far, the first scan of the vault is running): this answer may be incomplete.`
      : `The index is still being built (${status.indexed} of ${counted} notes seen so far are indexed): this answer may be incomplete.`
    : `The index is catching up (${status.pending} changed notes waiting): recent changes may be missing from this answer.`;
  return { pending, indexed: status.indexed, scanned: firstScan ? counted : status.scanned, notice };
}
