// The one writer of a vault's index: batches from the index loop, write-throughs' group commits, the
// deferred second transaction and pass ends all run under its lock, one transaction at a time (PGlite has
// one connection). Never decides what to index: paths to read again go back to the pipeline's queue.
import type { ChangeOrigin, DatabaseTransaction } from '../../sdk/types.js';
import { parseInline, prepareOne, unreadable, type Prepared } from './prepare.js';
import { parseBatch } from './prepare-batch.js';
import { DeferredRows } from './deferred.js';
import type { IndexState } from './state.js';
import { clearDeferred, type DeferredWrite } from './store.js';
import { WriteThroughQueue, type WriteRequest } from './write-through.js';
import type { ContributorVersions } from './versions.js';
import { announceCommit, type PipelineDeps } from './types.js';

/** What the writer needs of the pipeline that owns it. */
export interface IndexWriterHooks {
  /** Report a failure (counted, logged, shown in status). */
  readonly fail: (what: string, err: unknown) => void;
  /** Queue a path for the index loop; `force` derives it again even when its bytes are unchanged. */
  readonly mark: (path: string, force: boolean) => void;
  /** Make sure the index loop runs to take what was marked. */
  readonly kick: () => void;
}

export class IndexWriter {
  private writer: Promise<unknown> = Promise.resolve();
  private readonly writes = new WriteThroughQueue(
    (fn) => this.lock(fn),
    {
      maxPaths: () => this.deps.settings.batchSize,
      maxWaitMs: () => this.deps.settings.groupCommitWaitMs,
      writers: {
        inFlight: () => this.deps.writeCalls?.inFlight(this.vaultId) ?? 0,
        subscribe: (listener) => this.deps.writeCalls?.subscribe(listener) ?? (() => undefined),
      },
    },
    (group) => this.writeGroup(group),
  );
  /** Deferred rows of write-throughs that have answered, not yet written (see deferred.ts). */
  private readonly deferredRows = new DeferredRows();
  private deferredTimer: NodeJS.Timeout | undefined;
  /** The latest second transaction, queued or running (never rejects). */
  private deferredDone: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: PipelineDeps,
    private readonly state: IndexState,
    private readonly versions: ContributorVersions,
    private readonly hooks: IndexWriterHooks,
  ) {}

  private get vaultId(): number {
    return this.deps.vault.id;
  }

  /** Run `fn` with the database writer to itself (one transaction at a time). */
  lock<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.writer.then(fn, fn);
    this.writer = run.catch(() => undefined);
    return run;
  }

  /** Resolves once the transaction queued last has ended (never rejects). */
  whenFree(): Promise<unknown> {
    return this.writer.catch(() => undefined);
  }

  /** Whether an index pass must leave this path to a write-through (WriteThroughQueue.leaves). */
  leaves(path: string): boolean {
    return this.writes.leaves(path);
  }

  /** Hold paths for a write-through to come (WriteThroughQueue.hold). */
  hold(paths: readonly string[], retake: (path: string) => void): () => void {
    return this.writes.hold(paths, retake);
  }

  /** Resolves once the request's paths are committed, together with the requests waiting beside it. */
  submit(request: WriteRequest): Promise<void> {
    return this.writes.submit(request);
  }

  /** Sync contributor versions when the serving set changed; true when it did. */
  async syncContributors(): Promise<boolean> {
    const entries = this.deps.contributors();
    if (!this.versions.changed(entries)) return false;
    await this.writeDeferredNow();
    this.state.memo.clear();
    await this.versions.sync(entries);
    return true;
  }

  /**
   * Decide and write one batch; a write-through's deferred rows are queued (queueDeferred). The caller
   * holds the writer lock.
   */
  async commit(
    items: readonly Prepared[],
    moves?: ReadonlyMap<string, string>,
    origin?: ChangeOrigin,
    writeThrough = false,
  ): Promise<void> {
    await this.syncContributors();
    // Waiting rows were derived from older content. A batch that removes, quarantines or moves away a
    // note with rows waiting goes after them. An edit of such a note (another write-through, or a pass
    // that saw the file change again) queues its newer rows in their place: written here directly, they
    // would be overwritten by the older ones.
    if (items.some((i) => i.kind !== 'content' && this.deferredRows.has(i.path))) await this.writeDeferredNow();
    const waiting = this.deferredRows;
    const defer =
      writeThrough && this.deps.settings.deferredWrites
        ? () => true
        : waiting.size > 0
          ? (p: string) => waiting.has(p)
          : undefined;
    const deferred = await this.state.commit(items, moves, origin, defer);
    if (deferred.length > 0) this.queueDeferred(deferred);
  }

  /** Tell contributors that want it that a pass ended. The caller holds the writer lock. */
  async endPass(caughtUp = false): Promise<void> {
    const ending = this.deps.contributors().filter((c) => c.contributor.passEnd);
    if (ending.length === 0) return;
    const transaction = <T>(work: (trx: DatabaseTransaction) => Promise<T>): Promise<T> =>
      this.deps.db.transaction().execute(async (trx) => {
        await this.deps.fence?.(trx);
        return work(trx);
      });
    for (const c of ending) {
      try {
        await c.contributor.passEnd!(this.deps.db, { vaultId: this.vaultId, caughtUp, transaction });
      } catch (e) {
        this.hooks.fail(`contributor ${c.contributor.name} failed at the end of a pass`, e);
      }
    }
  }

  private async writeGroup(group: readonly WriteRequest[]): Promise<void> {
    const s = this.deps.settings;
    const paths = [...new Set(group.flatMap((r) => r.paths))];
    const moves = new Map(group.flatMap((r) => [...(r.moves ?? [])]));
    const items = await Promise.all(
      paths.map((p) => {
        const base = this.state.cache.get(p)?.hash;
        return prepareOne(this.deps.vault.fs, p, s.maxNoteBytes, base, moves.has(p)).catch((e) =>
          unreadable(p, base, e),
        );
      }),
    );
    const small = items.every((i) => i.kind !== 'content' || !i.bytes || i.bytes.length <= s.inlineParseMaxBytes);
    if (small) items.forEach(parseInline);
    else await parseBatch(this.deps.workers, items, 1);
    await this.commit(items, moves.size > 0 ? moves : undefined, group[0].origin, true);
    await this.endPass();
    // The callers are answered when this returns; their deferred rows wait (deferred.ts).
  }

  /**
   * Hold deferred rows for index.deferredDelayMs, so that notes written again meanwhile are derived once;
   * at once when the delay is 0 or a batch's worth of notes is waiting.
   */
  private queueDeferred(work: readonly DeferredWrite[]): void {
    this.deferredRows.add(work);
    const delay = this.deps.settings.deferredDelayMs;
    if (delay <= 0 || this.deferredRows.size >= this.deps.settings.batchSize) {
      void this.flushDeferred();
      return;
    }
    if (this.deferredTimer) return;
    this.deferredTimer = setTimeout(() => {
      this.deferredTimer = undefined;
      void this.flushDeferred();
    }, delay);
    // A process that stops meanwhile leaves the notes marked: the next start re-derives them.
    this.deferredTimer.unref();
  }

  /** Queue the second transaction for the rows waiting now; resolves when they are written (never rejects). */
  flushDeferred(): Promise<void> {
    clearTimeout(this.deferredTimer);
    this.deferredTimer = undefined;
    if (this.deferredRows.size === 0) return this.deferredDone;
    this.deferredDone = this.lock(() => this.writeDeferredNow());
    return this.deferredDone;
  }

  /** Write the rows waiting, if any; settled() waits for this write from here on. The caller holds the writer lock. */
  private writeDeferredNow(): Promise<void> {
    if (this.deferredRows.size === 0) return Promise.resolve();
    clearTimeout(this.deferredTimer);
    this.deferredTimer = undefined;
    const work = this.deferredRows.take((it) => this.state.cache.get(it.note.path)?.id === it.note.id);
    if (work.length === 0) return Promise.resolve();
    this.deferredDone = this.writeDeferred(work);
    return this.deferredDone;
  }

  /** The second transaction of a write-through: deferred contributors' rows, and their marks cleared. */
  private async writeDeferred(work: readonly DeferredWrite[]): Promise<void> {
    const ids = [...new Set(work.flatMap((w) => w.items.map((it) => it.note.id)))];
    try {
      await this.deps.db.transaction().execute(async (trx) => {
        await this.deps.fence?.(trx);
        for (const { entry, items } of work) {
          const k = entry.contributor;
          if (k.writeMany) await k.writeMany(trx, items);
          else for (const it of items) await k.write(trx, it.note, it.model);
        }
        await clearDeferred(trx, ids);
      });
      announceCommit(
        work.map((w) => w.entry),
        this.vaultId,
        (what, e) => this.hooks.fail(what, e),
      );
    } catch (e) {
      // The marks stay: the next pass re-derives these notes with every contributor.
      this.hooks.fail('deferred index write failed', e);
      this.state.memo.clear();
      for (const w of work) for (const it of w.items) this.hooks.mark(it.note.path, true);
      this.hooks.kick();
    }
  }
}
