// The live index of one vault: scan, watcher, reconcile passes and write-through feed one queue of
// changed paths; batches are read and parsed ahead, then committed one transaction at a time (PGlite has
// one connection). Implements IndexService. Never blocks startup, and one bad note never stops it.
import { setImmediate as yieldLoop } from 'node:timers/promises';
import { sql } from 'kysely';
import type { IndexService } from '../../sdk/index-service.js';
import type { ChangeOrigin } from '../../sdk/types.js';
import { mapLimit } from '../../sdk/map-limit.js';
import { parseInline, parseItems, prepareOne, unreadable, type Prepared } from './prepare.js';
import { DeferredRows } from './deferred.js';
import { rederiveStep } from './rederive.js';
import { brief, IndexState } from './state.js';
import { clearDeferred, type DeferredWrite } from './store.js';
import { WriteThroughQueue, type WriteRequest } from './write-through.js';
import { ContributorVersions } from './versions.js';
import { underAny, VaultWatcher, type WatchBatch } from './watcher.js';
import {
  announceCommit,
  isNotePath,
  type CachedNote,
  type PipelineDeps,
  type PipelineStatus,
  type WatcherState,
} from './types.js';

export class IndexPipeline implements IndexService {
  readonly state: IndexState;
  readonly versions: ContributorVersions;
  private readonly dirty = new Map<string, boolean>();
  private readonly inFlight = new Set<string>();
  private draining: Promise<void> | undefined;
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
  private passChain: Promise<unknown> = Promise.resolve();
  /** Deferred rows of write-throughs that have answered, not yet written (see deferred.ts). */
  private readonly deferredRows = new DeferredRows();
  private deferredTimer: NodeJS.Timeout | undefined;
  /** The latest second transaction, queued or running (never rejects). */
  private deferredDone: Promise<void> = Promise.resolve();
  private passRunning = false;
  private loaded: Promise<void> | undefined;
  private watcher: VaultWatcher | undefined;
  private watcherState: WatcherState = 'off';
  private watcherError: string | undefined;
  private reconcileTimer: NodeJS.Timeout | undefined;
  private idleWaiters: Array<() => void> = [];
  private readyWaiters: Array<() => void> = [];
  private scanned = 0;
  private ready = false;
  private lastPassAt: string | null = null;
  private failures = 0;
  private lastError: string | undefined;
  private closed = false;
  private readonly now: () => Date;

  constructor(readonly deps: PipelineDeps) {
    this.now = deps.now ?? (() => new Date());
    this.versions = new ContributorVersions(deps.db, deps.vault.id);
    this.state = new IndexState({
      db: deps.db,
      vaultId: deps.vault.id,
      contributors: deps.contributors,
      now: this.now,
      fail: (what, err) => this.fail(what, err),
      // A write-through's group commit finds a note changed under it outside the index loop: queued and
      // kicked, or it would wait for the next event or reconcile pass.
      requeue: (path) => this.requeue(path),
      fence: deps.fence,
    });
  }

  get cache(): ReadonlyMap<string, CachedNote> {
    return this.state.cache;
  }

  get vaultId(): number {
    return this.deps.vault.id;
  }

  /** Begin: load what the index holds, watch, run the initial pass — all in the background. */
  start(): void {
    // The pool's threads boot with the first note the pass parses, not here: a restart with nothing new
    // to parse, the usual one, then starts none (each costs ~15 MiB while it waits to be given back).
    void (async () => {
      try {
        await this.ensureLoaded();
        if (this.deps.settings.watch) await this.startWatcher();
        await this.runPass();
      } catch (e) {
        this.fail('index start failed', e);
      }
      const secs = this.deps.settings.reconcileSeconds;
      if (secs > 0 && !this.closed) {
        this.reconcileTimer = setInterval(() => {
          if (!this.passRunning) void this.runPass().catch((e) => this.fail('reconcile failed', e));
        }, secs * 1000);
        this.reconcileTimer.unref();
      }
    })();
  }

  /** The serving families changed: contributors may have appeared, vanished or bumped their version. */
  contributorsChanged(): void {
    this.kick();
  }

  private ensureLoaded(): Promise<void> {
    this.loaded ??= this.load().catch((e) => {
      this.loaded = undefined;
      throw e;
    });
    return this.loaded;
  }

  private async load(): Promise<void> {
    await this.state.load();
    await this.lock(() => this.versions.sync(this.deps.contributors()));
    // Write-throughs whose second transaction never ran (the process stopped in between): re-derive.
    const { rows } = await sql<{ path: string }>`SELECT n.path FROM index_deferred d JOIN notes n ON n.id = d.note_id
      WHERE d.vault_id = ${this.vaultId}`.execute(this.deps.db);
    for (const r of rows) this.mark(r.path, true);
  }

  private async startWatcher(): Promise<void> {
    this.watcherState = 'starting';
    const s = this.deps.settings;
    const watcher = new VaultWatcher({
      root: this.deps.vault.fs.root,
      debounceMs: s.debounceMs,
      maxDelayMs: Math.max(1000, s.debounceMs * 10),
      onBatch: (b) => this.onWatchBatch(b),
      onError: (err) => this.watcherFailed(err),
    });
    try {
      await watcher.start();
      this.watcher = watcher;
      this.watcherState = this.closed ? 'off' : 'watching';
      if (this.closed) await watcher.close();
    } catch (e) {
      this.watcherFailed(e);
    }
  }

  private watcherFailed(err: unknown): void {
    this.watcherState = 'failed';
    this.watcherError = `${err instanceof Error ? err.message : String(err)}; changes are picked up by reconcile passes only`;
    this.fail('vault watcher failed', err);
    const w = this.watcher;
    this.watcher = undefined;
    void w?.close();
  }

  private onWatchBatch(b: WatchBatch): void {
    for (const p of b.notes) if (isNotePath(p)) this.mark(p, false);
    if (b.deleted.size > 0) {
      for (const p of [...this.state.cache.keys(), ...this.state.quarantine.keys()])
        if (underAny(p, b.deleted)) this.mark(p, false);
    }
    for (const folder of b.created) {
      void this.deps.vault.fs
        .list(folder, { recursive: true })
        .then((entries) => {
          for (const e of entries) if (e.kind === 'file' && isNotePath(e.path)) this.mark(e.path, false);
          this.kick();
        })
        .catch(() => undefined);
    }
    this.kick();
  }

  /** A full pass: walk the vault, queue what differs from the index (or everything when forced), wait until done. */
  runPass(options: { force?: boolean } = {}): Promise<void> {
    const run = () => this.pass(options.force ?? false);
    const p = this.passChain.then(run, run);
    this.passChain = p.catch(() => undefined);
    return p;
  }

  private async pass(force: boolean): Promise<void> {
    if (this.closed) return;
    this.passRunning = true;
    try {
      await this.ensureLoaded();
      const seen = new Set<string>();
      for await (const e of this.deps.vault.fs.walk()) {
        if (this.closed) return;
        if (e.kind !== 'file' || !isNotePath(e.path)) continue;
        seen.add(e.path);
        if (!this.ready) this.scanned = seen.size;
        if (force || this.state.differs(e.path, e.size, Math.floor(e.mtimeMs))) this.mark(e.path, force);
        if (seen.size % 256 === 0) {
          this.kick();
          await yieldLoop();
        }
      }
      for (const p of [...this.state.cache.keys(), ...this.state.quarantine.keys()])
        if (!seen.has(p)) this.mark(p, false);
      this.scanned = seen.size;
      this.kick();
      await this.idle();
      if (this.closed) return;
      await this.lock(() => this.endPass(true));
      this.lastPassAt = this.now().toISOString();
      if (!this.ready) {
        this.ready = true;
        for (const w of this.readyWaiters.splice(0)) w();
      }
    } finally {
      this.passRunning = false;
    }
  }

  private mark(path: string, force: boolean): void {
    this.dirty.set(path, force || this.dirty.get(path) === true);
  }

  private idle(): Promise<void> {
    if (this.dirty.size === 0 && this.inFlight.size === 0 && !this.draining) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private kick(): void {
    if (this.draining || this.closed) return;
    this.draining = this.drain()
      .catch((e) => this.fail('index loop failed', e))
      .finally(() => {
        this.draining = undefined;
        if (this.dirty.size > 0 && !this.closed) this.kick();
        else for (const w of this.idleWaiters.splice(0)) w();
      });
  }

  private take(): Array<[string, boolean]> {
    const batch: Array<[string, boolean]> = [];
    for (const [p, force] of this.dirty) {
      if (batch.length >= this.deps.settings.batchSize) break;
      if (this.inFlight.has(p)) continue;
      batch.push([p, force]);
    }
    for (const [p] of batch) {
      this.dirty.delete(p);
      this.inFlight.add(p);
    }
    return batch;
  }

  private async drain(): Promise<void> {
    let committed = false;
    const ahead: Array<Promise<Prepared[]>> = [];
    const fill = () => {
      while (ahead.length < this.deps.settings.prefetchBatches && this.dirty.size > 0) {
        const batch = this.take();
        if (batch.length === 0) break;
        ahead.push(this.prepareBatch(batch));
      }
    };
    while (!this.closed) {
      fill();
      const next = ahead.shift();
      if (!next) {
        if (committed) {
          committed = false;
          await this.lock(() => this.endPass());
        }
        if (this.dirty.size === 0 && this.inFlight.size === 0) for (const w of this.idleWaiters.splice(0)) w();
        if (await this.lock(() => this.syncContributors())) continue;
        if (await rederiveStep(this)) continue;
        break;
      }
      const items = await next;
      fill();
      try {
        // A path a waiting write-through names, or one our own tool holds for its write-through to come, is
        // left to it: it reads the path from disk too and carries its caller's origin and rename. Committed
        // here first, our own tool's move (the watcher saw its rename) would be recorded as an outside removal.
        await this.lock(async () => {
          const ours = items.filter((i) => !this.writes.leaves(i.path));
          if (ours.length > 0) await this.commit(ours);
        });
        committed = true;
      } finally {
        for (const i of items) this.inFlight.delete(i.path);
      }
      await yieldLoop();
    }
    await Promise.allSettled(ahead);
  }

  /** Sync contributor versions when the serving set changed; true when it did. */
  private async syncContributors(): Promise<boolean> {
    const entries = this.deps.contributors();
    if (!this.versions.changed(entries)) return false;
    await this.writeDeferredNow();
    this.state.memo.clear();
    await this.versions.sync(entries);
    return true;
  }

  /** Read (and parse what changed) for a batch of paths. Never rejects: failures become quarantine items. */
  async prepareBatch(batch: ReadonlyArray<readonly [string, boolean]>): Promise<Prepared[]> {
    const { fs } = this.deps.vault;
    const s = this.deps.settings;
    const items = await mapLimit(batch, s.readConcurrency, ([p, force]) => {
      const base = this.cache.get(p)?.hash;
      return prepareOne(fs, p, s.maxNoteBytes, base, force).catch((e) => unreadable(p, base, e));
    });
    await this.parse(items, s.parseTaskSize);
    this.prepareContributors(items);
    return items;
  }

  /**
   * Contributors' model-only work for a parsed batch, done here while the batch before it is written (see
   * IndexContributor.prepare). A prepare that throws costs nothing but its time: write derives again.
   */
  private prepareContributors(items: readonly Prepared[]): void {
    const preparing = this.deps.contributors().filter((c) => c.contributor.prepare);
    if (preparing.length === 0) return;
    for (const it of items) {
      if (it.kind !== 'content' || !it.model) continue;
      for (const c of preparing) {
        try {
          c.contributor.prepare!(it.model);
        } catch (e) {
          this.deps.log.debug({ err: brief(e), path: it.path }, `contributor ${c.contributor.name} failed to prepare`);
        }
      }
    }
  }

  private async parse(items: Prepared[], taskSize: number): Promise<void> {
    try {
      await parseItems(this.deps.workers, items, taskSize);
    } catch {
      // One note may have crashed the task: parse the rest one by one so only it is quarantined.
      for (let i = 0; i < items.length; i++) {
        const it = items[i];
        if (it.kind !== 'content' || !it.bytes) continue;
        try {
          await parseItems(this.deps.workers, [it], 1);
        } catch (e) {
          items[i] = {
            kind: 'quarantine',
            path: it.path,
            reason: `parse_failed: ${brief(e)}`,
            hash: it.hash,
            size: it.size,
            mtimeMs: it.mtimeMs,
            baseHash: it.baseHash,
          };
        }
      }
    }
  }

  /**
   * Decide and write one batch; a write-through's deferred rows are queued (queueDeferred). The caller
   * holds the writer lock.
   */
  private async commit(
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
  private async endPass(caughtUp = false): Promise<void> {
    const ending = this.deps.contributors().filter((c) => c.contributor.passEnd);
    if (ending.length === 0) return;
    for (const c of ending) {
      try {
        await c.contributor.passEnd!(this.deps.db, { vaultId: this.vaultId, caughtUp });
      } catch (e) {
        this.fail(`contributor ${c.contributor.name} failed at the end of a pass`, e);
      }
    }
  }

  /** Run `fn` with the database writer to itself (one transaction at a time). */
  lock<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.writer.then(fn, fn);
    this.writer = run.catch(() => undefined);
    return run;
  }

  /**
   * Queue a path for the next batch, when a note changed under the commit that read it (the re-derive pass,
   * a batch's or a write-through's commit), and make sure the index loop runs to take it.
   */
  requeue(path: string): void {
    this.mark(path, false);
    this.kick();
  }

  isClosed(): boolean {
    return this.closed;
  }

  fail(what: string, err: unknown): void {
    this.failures++;
    this.lastError = `${what}: ${brief(err)}`;
    this.deps.log.warn({ err: brief(err) }, what);
  }

  // --- IndexService ---------------------------------------------------------------------------

  private checkVault(vaultId: number): void {
    if (vaultId !== this.vaultId) throw new Error(`vault ${vaultId} is not indexed by this process`);
  }

  noteWritten(vaultId: number, path: string, origin?: ChangeOrigin): Promise<void> {
    return this.writeThrough(vaultId, [path], undefined, origin);
  }

  noteRemoved(vaultId: number, path: string, origin?: ChangeOrigin): Promise<void> {
    return this.writeThrough(vaultId, [path], undefined, origin);
  }

  noteMoved(vaultId: number, from: string, to: string, origin?: ChangeOrigin): Promise<void> {
    return this.writeThrough(vaultId, [from, to], new Map([[to, from]]), origin);
  }

  hold(vaultId: number, paths: readonly string[]): () => void {
    this.checkVault(vaultId);
    return this.writes.hold(paths.filter(isNotePath), (p) => this.requeue(p));
  }

  /**
   * Index these paths now, from what is on disk, inside the caller's call. Requests that arrive while
   * the writer is busy wait together and commit as one batch (group commit), so concurrent writers
   * share one transaction instead of queueing one transaction each.
   */
  private async writeThrough(
    vaultId: number,
    paths: readonly string[],
    moves?: ReadonlyMap<string, string>,
    origin?: ChangeOrigin,
  ): Promise<void> {
    this.checkVault(vaultId);
    await this.ensureLoaded();
    const notes = paths.filter(isNotePath);
    if (notes.length === 0) return;
    await this.writes.submit({ paths: notes, moves, origin });
  }

  private async writeGroup(group: readonly WriteRequest[]): Promise<void> {
    const s = this.deps.settings;
    const paths = [...new Set(group.flatMap((r) => r.paths))];
    const moves = new Map(group.flatMap((r) => [...(r.moves ?? [])]));
    const items = await Promise.all(
      paths.map((p) => {
        const base = this.cache.get(p)?.hash;
        return prepareOne(this.deps.vault.fs, p, s.maxNoteBytes, base, moves.has(p)).catch((e) =>
          unreadable(p, base, e),
        );
      }),
    );
    const small = items.every((i) => i.kind !== 'content' || !i.bytes || i.bytes.length <= s.inlineParseMaxBytes);
    if (small) items.forEach(parseInline);
    else await this.parse(items, 1);
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
  private flushDeferred(): Promise<void> {
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
    const work = this.deferredRows.take((it) => this.cache.get(it.note.path)?.id === it.note.id);
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
        (what, e) => this.fail(what, e),
      );
    } catch (e) {
      // The marks stay: the next pass re-derives these notes with every contributor.
      this.fail('deferred index write failed', e);
      this.state.memo.clear();
      for (const w of work) for (const it of w.items) this.mark(it.note.path, true);
      this.kick();
    }
  }

  settled(vaultId: number): Promise<void> {
    this.checkVault(vaultId);
    return this.flushDeferred();
  }

  status(vaultId: number = this.vaultId): PipelineStatus {
    this.checkVault(vaultId);
    return {
      scanned: this.scanned,
      indexed: this.state.cache.size,
      quarantined: this.state.quarantine.size,
      pending: this.dirty.size + this.inFlight.size,
      backlog: Object.fromEntries(this.versions.backlog),
      ready: this.ready,
      resumed: this.deps.resumed?.() ?? false,
      lastPassAt: this.lastPassAt,
      lastChangeAt: this.state.lastChangeAt,
      failures: this.failures,
      watcher: this.watcherState,
      ...(this.watcherError ? { watcherError: this.watcherError } : {}),
      ...(this.lastError ? { lastError: this.lastError } : {}),
    };
  }

  /** Counts for /health: no paths, no messages. */
  healthSummary(): Omit<PipelineStatus, 'lastError' | 'watcherError'> {
    const { lastError: _e, watcherError: _w, ...counts } = this.status();
    return counts;
  }

  whenReady(vaultId: number = this.vaultId, timeoutMs = 30_000): Promise<boolean> {
    this.checkVault(vaultId);
    if (this.ready) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(this.ready), timeoutMs);
      timer.unref();
      this.readyWaiters.push(() => {
        clearTimeout(timer);
        resolve(this.ready);
      });
    });
  }

  /** Resolves once nothing is queued or in flight (tests, CLI). */
  whenIdle(): Promise<void> {
    return this.idle();
  }

  /** Stop watching and passes, finish the batch being written, then return. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.reconcileTimer);
    this.watcherState = 'off';
    await this.watcher?.close();
    await this.draining?.catch(() => undefined);
    await this.flushDeferred();
    await this.writer.catch(() => undefined);
    for (const w of this.idleWaiters.splice(0)) w();
    for (const w of this.readyWaiters.splice(0)) w();
  }
}
