// Group commit for write-through: requests that arrive while the index writer is busy wait together
// and are indexed as one batch, so concurrent writers share a transaction instead of queueing one each.
// Before a batch, the writer waits (briefly, bounded) for the other write calls in flight to hand over
// their notes: a transaction's fixed cost is most of a small one's. Never reorders one origin's requests
// and never mixes origins in a batch (a commit carries one origin).
import { setImmediate as yieldLoop } from 'node:timers/promises';
import type { ChangeOrigin } from '../../sdk/types.js';

export interface WriteRequest {
  readonly paths: readonly string[];
  /** Renames our tools made: destination → source. */
  readonly moves?: ReadonlyMap<string, string>;
  readonly origin?: ChangeOrigin;
}

interface Waiting extends WriteRequest {
  resolve(): void;
  reject(err: unknown): void;
}

function originKey(origin: ChangeOrigin | undefined): string {
  return origin ? JSON.stringify([origin.kind, origin.id, origin.name]) : '';
}

export interface GroupCommitOptions {
  /** Paths per batch at most. */
  readonly maxPaths: () => number;
  /** Longest wait for the write calls in flight to submit (0: never wait). */
  readonly maxWaitMs: () => number;
  /** Write calls in flight now, each of which may still submit, and a signal when that number changes. */
  readonly writers?: { inFlight(): number; subscribe(listener: () => void): () => void };
}

export class WriteThroughQueue {
  private waiting: Waiting[] = [];
  private scheduled = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly lock: (fn: () => Promise<void>) => Promise<void>,
    private readonly options: GroupCommitOptions,
    private readonly write: (group: readonly WriteRequest[]) => Promise<void>,
  ) {}

  /** Paths our own tools hold for a write-through to come (hold), with how many holds name each. */
  private readonly held = new Map<string, number>();
  /** Held paths a pass left alone, taken again when their last hold ends. */
  private readonly left = new Set<string>();

  /**
   * Whether an index pass must leave this path to a write-through, which indexes it from disk with its
   * caller's origin and rename: a request waiting for the writer names it, or our own tool holds it for one
   * about to come (a held path is taken again when released).
   */
  leaves(path: string): boolean {
    if (this.held.has(path)) {
      this.left.add(path);
      return true;
    }
    return this.waiting.some((r) => r.paths.includes(path));
  }

  /**
   * Hold `paths` until the returned release is called (IndexService.hold); `retake` queues a path a pass left
   * meanwhile for the next pass, so a rename that failed, or a write-through that did, loses nothing.
   */
  hold(paths: readonly string[], retake: (path: string) => void): () => void {
    for (const p of paths) this.held.set(p, (this.held.get(p) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const p of paths) {
        const n = (this.held.get(p) ?? 1) - 1;
        if (n > 0) {
          this.held.set(p, n);
          continue;
        }
        this.held.delete(p);
        if (this.left.delete(p)) retake(p);
      }
    };
  }

  /** Resolves once the request's paths are committed (or rejects with the batch's error). */
  submit(request: WriteRequest): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ ...request, resolve, reject });
      this.wake?.();
      this.schedule();
    });
  }

  /**
   * Wait until every write call in flight has submitted (each waiting request belongs to one of them)
   * or ended, at most maxWaitMs. A lone writer never waits: its own request already covers the count.
   */
  private async gather(): Promise<void> {
    const { writers } = this.options;
    const wait = this.options.maxWaitMs();
    if (!writers || wait <= 0 || this.waiting.length >= writers.inFlight()) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        unsubscribe();
        this.wake = undefined;
        resolve();
      };
      const check = () => {
        if (this.waiting.length >= writers.inFlight()) done();
      };
      const timer = setTimeout(done, wait);
      const unsubscribe = writers.subscribe(check);
      this.wake = check;
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    void this.lock(async () => {
      // PGlite runs queries synchronously, so a commit never lets I/O callbacks in; one turn of the
      // event loop here lets writers whose file writes finished meanwhile join this batch.
      await yieldLoop();
      await this.gather();
      // Requests arriving from here on wait for the next turn of the writer, together.
      this.scheduled = false;
      const group = this.take();
      if (group.length === 0) return;
      try {
        await this.write(group);
        for (const r of group) r.resolve();
      } catch (e) {
        for (const r of group) r.reject(e);
      }
      if (this.waiting.length > 0) this.schedule();
    });
  }

  /** The oldest request and every later one with the same origin, up to maxPaths paths in all. */
  private take(): Waiting[] {
    const first = this.waiting[0];
    if (!first) return [];
    const key = originKey(first.origin);
    const limit = this.options.maxPaths();
    const group: Waiting[] = [];
    let size = 0;
    this.waiting = this.waiting.filter((r) => {
      if (originKey(r.origin) !== key || (group.length > 0 && size + r.paths.length > limit)) return true;
      group.push(r);
      size += r.paths.length;
      return false;
    });
    return group;
  }
}
