// The live index of one vault: scan, watcher, reconcile passes and write-through feed one queue of
// changed paths; batches are read and parsed ahead, then committed one transaction at a time (PGlite has
// one connection). Implements IndexService. Never blocks startup, and one bad note never stops it.
import { setImmediate as yieldLoop } from 'node:timers/promises';
import { sql } from 'kysely';
import type { IndexService } from '../../sdk/index-service.js';
import type { ChangeOrigin } from '../../sdk/types.js';
import type { Prepared } from './prepare.js';
import { prepareBatch } from './prepare-batch.js';
import { IndexWriter } from './index-writer.js';
import { rederiveStep } from './rederive.js';
import { brief, INDEX_FAILED, IndexState } from './state.js';
import { ContributorVersions } from './versions.js';
import { WatchFeed } from './watch-feed.js';
import { isNotePath, type CachedNote, type PipelineDeps, type PipelineStatus } from './types.js';

export class IndexPipeline implements IndexService {
  readonly state: IndexState;
  readonly versions: ContributorVersions;
  private readonly dirty = new Map<string, boolean>();
  private readonly inFlight = new Set<string>();
  private draining: Promise<void> | undefined;
  /** PGlite has one connection: every write of this index, rederive.ts's through lock() too, queues here. */
  private readonly writer: IndexWriter;
  private passChain: Promise<unknown> = Promise.resolve();
  private passRunning = false;
  private loaded: Promise<void> | undefined;
  private readonly watch: WatchFeed;
  private reconcileTimer: NodeJS.Timeout | undefined;
  private idleWaiters: Array<() => void> = [];
  private readyWaiters: Array<() => void> = [];
  private scanned = 0;
  private ready = false;
  private lastPassAt: string | null = null;
  private failures = 0;
  private lastError: string | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;
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
    this.writer = new IndexWriter(deps, this.state, this.versions, {
      fail: (what, err) => this.fail(what, err),
      mark: (path, force) => this.mark(path, force),
      kick: () => this.kick(),
    });
    this.watch = new WatchFeed(deps, this.state, {
      mark: (path, force) => this.mark(path, force),
      kick: () => this.kick(),
      fail: (what, err) => this.fail(what, err),
      isClosed: () => this.closed,
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
        // Nothing indexed yet: every note of the vault is to be parsed, so the bulk lane's thread boots now,
        // while the watcher starts and the walk runs, not when the walk hands it its first batch.
        if (this.state.cache.size === 0 && this.state.quarantine.size === 0) this.deps.workers.warm?.('bulk');
        if (this.deps.settings.watch) await this.watch.start();
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
    // Notes an earlier process could not index for a database or family refusal (not their own bytes, which
    // the other reasons name) are tried once more at each start: the cause may have passed.
    for (const [path, q] of this.state.quarantine) if (q.reason.startsWith(INDEX_FAILED)) this.mark(path, false);
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
      await this.lock(() => this.writer.endPass(true));
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
    let rederived = false;
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
          await this.lock(() => this.writer.endPass());
        }
        if (this.dirty.size === 0 && this.inFlight.size === 0) for (const w of this.idleWaiters.splice(0)) w();
        if (await this.lock(() => this.writer.syncContributors())) continue;
        if (await rederiveStep(this)) {
          rederived = true;
          continue;
        }
        // A re-derive ends as a pass does, once its last batch is in (the graph re-resolves what it queued).
        if (rederived) await this.lock(() => this.writer.endPass());
        break;
      }
      const items = await next;
      fill();
      try {
        // A path a waiting write-through names, or one our own tool holds for its write-through to come, is
        // left to it: it reads the path from disk too and carries its caller's origin and rename. Committed
        // here first, our own tool's move (the watcher saw its rename) would be recorded as an outside removal.
        await this.lock(async () => {
          const ours = items.filter((i) => !this.writer.leaves(i.path));
          if (ours.length > 0) await this.writer.commit(ours);
        });
        committed = true;
      } finally {
        for (const i of items) this.inFlight.delete(i.path);
      }
      await yieldLoop();
    }
    await Promise.allSettled(ahead);
  }

  /** Read (and parse what changed) for a batch of paths. Never rejects: failures become quarantine items. */
  prepareBatch(batch: ReadonlyArray<readonly [string, boolean]>): Promise<Prepared[]> {
    return prepareBatch(this.deps, this.cache, batch);
  }

  /** Run `fn` with the database writer to itself (one transaction at a time). */
  lock<T>(fn: () => Promise<T>): Promise<T> {
    return this.writer.lock(fn);
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
    return this.writer.hold(paths.filter(isNotePath), (p) => this.requeue(p));
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
    await this.writer.submit({ paths: notes, moves, origin });
  }

  settled(vaultId: number): Promise<void> {
    this.checkVault(vaultId);
    return this.writer.flushDeferred();
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
      watcher: this.watch.state,
      ...(this.watch.error ? { watcherError: this.watch.error } : {}),
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
  close(): Promise<void> {
    // A second close waits for the first: both callers go on only once the batch being written is done.
    this.closing ??= this.closeNow();
    return this.closing;
  }

  private async closeNow(): Promise<void> {
    this.closed = true;
    clearInterval(this.reconcileTimer);
    await this.watch.close();
    await this.draining?.catch(() => undefined);
    await this.writer.flushDeferred();
    await this.writer.whenFree();
    for (const w of this.idleWaiters.splice(0)) w();
    for (const w of this.readyWaiters.splice(0)) w();
  }
}
