// A killable regex thread for search_regex: batches go in, line matches come out, and one deadline
// covers the whole call; past it (or on abort) the thread is terminated, never the event loop blocked.
import { Worker } from 'node:worker_threads';
import { regexBatch, type RegexBatchPayload, type RegexFileResult } from './match.js';

// The function's own (already compiled) source, so the thread needs no module loader or TS support.
// `__name` stands in for the helper a keepNames transpiler may have inserted.
const SOURCE = `const { parentPort } = require('node:worker_threads');
const __name = (f) => f;
const regexBatch = ${regexBatch.toString()};
parentPort.on('message', (m) => {
  try { parentPort.postMessage({ ok: true, result: regexBatch(m) }); }
  catch (e) { parentPort.postMessage({ ok: false, message: String((e && e.message) || e) }); }
});`;

export type BatchOutcome =
  | { readonly ok: true; readonly results: RegexFileResult[] }
  | { readonly ok: false; readonly reason: 'deadline' | 'aborted' | 'failed'; readonly message?: string };

export class RegexSession {
  private readonly worker: Worker;
  private pending: ((o: BatchOutcome) => void) | undefined;
  private timer: NodeJS.Timeout;
  private closed = false;
  private expired: 'deadline' | 'aborted' | undefined;

  constructor(
    deadlineMs: number,
    private readonly signal: AbortSignal,
  ) {
    this.worker = new Worker(SOURCE, { eval: true, resourceLimits: { maxOldGenerationSizeMb: 256 } });
    this.worker.unref();
    this.worker.on('message', (m: { ok: boolean; result?: RegexFileResult[]; message?: string }) => {
      this.settle(
        m.ok && m.result ? { ok: true, results: m.result } : { ok: false, reason: 'failed', message: m.message },
      );
    });
    this.worker.on('error', (e) => this.settle({ ok: false, reason: 'failed', message: e.message }));
    this.timer = setTimeout(() => this.expire('deadline'), deadlineMs);
    this.timer.unref();
    signal.addEventListener('abort', this.onAbort, { once: true });
    if (signal.aborted) this.expire('aborted');
  }

  private readonly onAbort = (): void => this.expire('aborted');

  /** Why the session can no longer run, if it cannot. */
  get stopped(): 'deadline' | 'aborted' | undefined {
    return this.expired;
  }

  run(payload: RegexBatchPayload): Promise<BatchOutcome> {
    if (this.expired) return Promise.resolve({ ok: false, reason: this.expired });
    return new Promise((resolve) => {
      this.pending = resolve;
      this.worker.postMessage(payload);
    });
  }

  private settle(o: BatchOutcome): void {
    const p = this.pending;
    this.pending = undefined;
    p?.(o);
  }

  private expire(reason: 'deadline' | 'aborted'): void {
    if (this.expired) return;
    this.expired = reason;
    void this.worker.terminate();
    this.settle({ ok: false, reason });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    this.signal.removeEventListener('abort', this.onAbort);
    this.expired ??= 'aborted';
    this.settle({ ok: false, reason: 'aborted' });
    await this.worker.terminate();
  }
}
