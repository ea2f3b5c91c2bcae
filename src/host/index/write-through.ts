// Group commit for write-through: requests that arrive while the index writer is busy wait together
// and are indexed as one batch, so concurrent writers share a transaction instead of queueing one each.
// Never reorders one origin's requests and never mixes origins in a batch (a commit carries one origin).
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

export class WriteThroughQueue {
  private waiting: Waiting[] = [];
  private scheduled = false;

  constructor(
    private readonly lock: (fn: () => Promise<void>) => Promise<void>,
    private readonly maxPaths: () => number,
    private readonly write: (group: readonly WriteRequest[]) => Promise<void>,
  ) {}

  /** Resolves once the request's paths are committed (or rejects with the batch's error). */
  submit(request: WriteRequest): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ ...request, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    void this.lock(async () => {
      // PGlite runs queries synchronously, so a commit never lets I/O callbacks in; one turn of the
      // event loop here lets writers whose file writes finished meanwhile join this batch.
      await yieldLoop();
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
    const limit = this.maxPaths();
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
