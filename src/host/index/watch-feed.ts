// The vault watcher as a source of the index's queue: starts and stops it, keeps the state status reports,
// and turns each batch of events into marked paths (a folder deleted or moved in marks the notes below it).
// A watcher that fails leaves changes to reconcile passes; it never stops the index.
import type { IndexState } from './state.js';
import { underAny, VaultWatcher, type WatchBatch } from './watcher.js';
import { isNotePath, type PipelineDeps, type WatcherState } from './types.js';

/** What the feed needs of the pipeline that owns it. */
export interface WatchFeedHooks {
  /** Queue a path for the index loop. */
  readonly mark: (path: string, force: boolean) => void;
  /** Make sure the index loop runs to take what was marked. */
  readonly kick: () => void;
  /** Report a failure (counted, logged, shown in status). */
  readonly fail: (what: string, err: unknown) => void;
  /** Whether the pipeline closed meanwhile (a watcher that finishes starting then stops at once). */
  readonly isClosed: () => boolean;
}

export class WatchFeed {
  private watcher: VaultWatcher | undefined;
  private watcherState: WatcherState = 'off';
  private watcherError: string | undefined;

  constructor(
    private readonly deps: PipelineDeps,
    private readonly index: IndexState,
    private readonly hooks: WatchFeedHooks,
  ) {}

  get state(): WatcherState {
    return this.watcherState;
  }

  /** Why the watcher failed, if it did. */
  get error(): string | undefined {
    return this.watcherError;
  }

  async start(): Promise<void> {
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
      this.watcherState = this.hooks.isClosed() ? 'off' : 'watching';
      if (this.hooks.isClosed()) await watcher.close();
    } catch (e) {
      this.watcherFailed(e);
    }
  }

  async close(): Promise<void> {
    this.watcherState = 'off';
    await this.watcher?.close();
  }

  private watcherFailed(err: unknown): void {
    this.watcherState = 'failed';
    this.watcherError = `${err instanceof Error ? err.message : String(err)}; changes are picked up by reconcile passes only`;
    this.hooks.fail('vault watcher failed', err);
    const w = this.watcher;
    this.watcher = undefined;
    void w?.close();
  }

  private onWatchBatch(b: WatchBatch): void {
    for (const p of b.notes) if (isNotePath(p)) this.hooks.mark(p, false);
    if (b.deleted.size > 0) {
      for (const p of [...this.index.cache.keys(), ...this.index.quarantine.keys()])
        if (underAny(p, b.deleted)) this.hooks.mark(p, false);
    }
    for (const folder of b.created) {
      void this.deps.vault.fs
        .list(folder, { recursive: true })
        .then((entries) => {
          for (const e of entries) if (e.kind === 'file' && isNotePath(e.path)) this.hooks.mark(e.path, false);
          this.hooks.kick();
        })
        .catch(() => undefined);
    }
    this.hooks.kick();
  }
}
