// The worker pool service (Piscina): started lazily on first use so startup never waits for it.
// Picks the compiled worker (.js) in production and the TypeScript one under tsx.
import os from 'node:os';
import { Piscina } from 'piscina';
import type { WorkerPool } from '../../sdk/types.js';

export interface WorkerPoolSettings {
  readonly threads: number;
  readonly idleTimeoutMs: number;
}

export class PiscinaPool implements WorkerPool {
  private pool: Piscina | undefined;
  constructor(private readonly settings: WorkerPoolSettings) {}

  /** Auto: one core stays with the main thread (the event loop) and embedded PGlite's thread;
   * on 2 cores one worker indexed 1,433–1,488 notes/s against 1,321–1,355 with two (bench/index-cold). */
  private get threads(): number {
    return this.settings.threads > 0 ? this.settings.threads : Math.max(1, Math.min(4, os.availableParallelism() - 1));
  }

  private get piscina(): Piscina {
    if (!this.pool) {
      const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
      this.pool = new Piscina({
        filename: new URL(`./worker${ext}`, import.meta.url).href,
        minThreads: 0,
        maxThreads: this.threads,
        idleTimeout: this.settings.idleTimeoutMs,
      });
    }
    return this.pool;
  }

  run<T = unknown>(task: string | { module: string; fn: string }, payload: unknown, options: { signal?: AbortSignal } = {}): Promise<T> {
    const message = typeof task === 'string' ? { task, payload } : { module: task.module, fn: task.fn, payload };
    return this.piscina.run(message, { signal: options.signal }) as Promise<T>;
  }

  warm(): void {
    // One trivial task per thread makes Piscina boot them all; what they load stays loaded until idleTimeout.
    for (let i = 0; i < this.threads; i++) this.piscina.run({ task: 'echo', payload: null }).catch(() => undefined);
  }

  stats(): { threads: number; queued: number; completed: number } {
    if (!this.pool) return { threads: 0, queued: 0, completed: 0 };
    return { threads: this.pool.threads.length, queued: this.pool.queueSize, completed: this.pool.completed };
  }

  async close(): Promise<void> {
    if (this.pool) await this.pool.destroy();
    this.pool = undefined;
  }
}
