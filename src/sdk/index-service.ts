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
   * Resolves once the deferred rows (see IndexContributor.deferred) of every write-through that has
   * returned are committed; rows waiting out index.deferredDelayMs are written at once. Readers of a
   * deferred contributor's rows await it before they query.
   */
  settled(vaultId: number): Promise<void>;
  status(vaultId: number): IndexStatus;
  /** Resolves when the initial scan is done (or the timeout passes); for tests and CLI. */
  whenReady(vaultId: number, timeoutMs?: number): Promise<boolean>;
}
