// One tool call's deadline and cancellation (the dispatcher's): the call ends at tools.callTimeoutMs or when
// the client cancels, whichever is first, and its handler's AbortSignal follows.
import { Refusal } from '../../sdk/refusals.js';

/**
 * How long a call runs before it starts listening for the client's cancellation. The client's AbortSignal
 * is the SDK's, new for every request, and the first listener on a fresh signal costs ~5 µs in Node 20 (it sets the
 * signal up for listeners then): most calls end well before this, and never pay it. A cancellation that
 * arrives sooner is seen when the listener is attached (the signal is already aborted then).
 */
export const LISTEN_AFTER_MS = 20;

/**
 * One call's deadline and cancellation: it ends the call at callTimeoutMs (a TimeoutError) or when the
 * client cancels, with one timer cleared when the call ends. Its AbortSignal, for handlers and the worker
 * pool, is made on first use: AbortSignal.timeout and .any cost a signal each and leave the timer running,
 * and they were a tenth of a small call's time. The timer first fires after LISTEN_AFTER_MS to attach the
 * client's listener, then again at the deadline.
 */
export class CallDeadline {
  private controller: AbortController | undefined;
  private reason: unknown;
  private aborted = false;
  private readonly watchers = new Set<() => void>();
  private readonly due: number;
  private timer: NodeJS.Timeout | undefined;
  private onClient: (() => void) | undefined;

  constructor(
    private readonly timeoutMs: number,
    private readonly client: AbortSignal | undefined,
  ) {
    this.due = performance.now() + timeoutMs;
    if (client?.aborted) this.abort(client.reason);
    else this.arm(client ? Math.min(LISTEN_AFTER_MS, timeoutMs) : timeoutMs);
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** `work`, or the timeout refusal as soon as the deadline passes or the client cancels. */
  race<T>(work: Promise<T>): Promise<T> {
    if (this.aborted) return Promise.reject(abortRefusal(this.reason, this.timeoutMs));
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(abortRefusal(this.reason, this.timeoutMs));
      this.watchers.add(onAbort);
      work.then(
        (v) => {
          this.watchers.delete(onAbort);
          resolve(v);
        },
        (e) => {
          this.watchers.delete(onAbort);
          reject(e);
        },
      );
    });
  }

  /** The call ended: the timer and the client's listener go. */
  end(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.onClient) this.client?.removeEventListener('abort', this.onClient);
  }

  private arm(ms: number): void {
    this.timer = setTimeout(fire, ms, this);
    this.timer.unref();
  }

  /** The timer fired: listen to the client from now on, or the deadline has passed. */
  fired(): void {
    const client = this.client;
    if (client && !this.onClient) {
      if (client.aborted) {
        this.abort(client.reason);
        return;
      }
      this.onClient = () => this.abort(client.reason);
      client.addEventListener('abort', this.onClient, { once: true });
      const left = this.due - performance.now();
      if (left > 0) {
        this.arm(left);
        return;
      }
    }
    this.abort(new DOMException('The call ran past its deadline.', 'TimeoutError'));
  }

  private abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
    for (const watcher of this.watchers) watcher();
    this.watchers.clear();
  }
}

function fire(deadline: CallDeadline): void {
  deadline.fired();
}

function abortRefusal(abortReason: unknown, timeoutMs: number): Refusal {
  const reason = abortReason as { name?: string } | undefined;
  if (reason?.name === 'TimeoutError') return new Refusal('timeout', { timeoutMs });
  return new Refusal('timeout', { timeoutMs }, 'The call was cancelled by the client before it finished.');
}
