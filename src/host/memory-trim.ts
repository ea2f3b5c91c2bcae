// Gives back the memory an idle server no longer uses, in two parts.
// - V8's heap: start-up allocates mostly long-lived objects (modules, schemas), so V8 grows the main
//   thread's young generation to its maximum (two 16 MiB semi-spaces on Node 20, more on 24) and keeps it
//   until it collects with memory in mind, which it does late or never on a server that is simply quiet.
//   V8 also leaves the old generation's garbage (an index pass's, a keyword index load's) until allocation
//   forces a collection, which a quiet server never does. Once the event loop has been quiet for
//   QUIET_CHECKS seconds after work, the host runs a full collection, and V8 shrinks the young generation
//   since the last seconds allocated little (every time on Node 24, in some runs on Node 20): an idle empty
//   vault ~30–50 MiB less, 10k notes after 100 calls ~110 MiB less (bench/footprint). Once per quiet spell, never while
//   requests keep the loop busy.
// - glibc's arenas: glibc keeps what a thread frees in its malloc arena and returns it only from the top of
//   each heap, so what V8's compilers, PGlite's start-up and an index pass allocated and freed stays
//   resident (about 70 MiB). malloc_trim(0) releases every free page; the native core runs it on the thread
//   pool, a few milliseconds, shortly after start, then on a timer and after each heap collection. A no-op
//   where the addon lacks it (musl, old builds).
// The PGlite thread and the worker pool's threads collect their own heaps the same way (an index pass
// leaves ~80 MiB of wire messages' garbage on PGlite's thread at 10k notes); the trim is the main thread's.
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Logger } from '../sdk/types.js';
import { loadNative } from './vault/native.js';

/** How often the loop's quiet is checked (a few microseconds); the first trim comes after one check. */
const CHECK_MS = 1_000;
/** malloc_trim every this many checks: cheap when there is nothing to give back, and a burst of work is given back soon. */
const TRIM_EVERY_CHECKS = 10;
/** A second in which the event loop was busy less than this share of the time was a quiet one. */
export const QUIET_UTILIZATION = 0.05;
/** Quiet checks in a row before the heap is collected: V8 judges the young generation's size by the last ~5 s. */
export const QUIET_CHECKS = 6;
/** Collections per quiet spell that may fail to shrink the heap before the host waits for work again. */
const MAX_ATTEMPTS = 3;

/** A logger for threads that have none: the collection is routine, nothing to report. */
export const QUIET_LOG: Pick<Logger, 'debug'> = { debug: () => undefined };

/** Above this, the young generation was not shrunk by a plain collection. */
const YOUNG_SHRUNK_BYTES = 8 * 1024 * 1024;

function youngGenerationBytes(): number {
  return v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.physical_space_size ?? 0;
}

/**
 * A full collection of V8's heap (on the thread that calls it), or undefined where the runtime does not
 * offer it. `gc` is exposed to one private context only, never to the process's globals.
 */
export function heapReducer(): (() => boolean) | undefined {
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    v8.setFlagsFromString('--no-expose-gc');
    if (typeof gc !== 'function') return undefined;
    return () => {
      // First the collection that can shrink the young generation. V8 shrinks it when the allocation it
      // measured over the last ~5 s is low but not zero, which a collection right after another never sees
      // (hence QUIET_CHECKS, and this order): Node 20's V8 does it in this call (which, given options, leaves
      // the old generation as it is), Node 24's only in its memory-reducing collection (a few full passes,
      // ~150 ms on an idle server).
      gc({ type: 'major', execution: 'sync' });
      if (youngGenerationBytes() > YOUNG_SHRUNK_BYTES) gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
      // Then a full collection of the old generation's garbage on every version (gc() takes no options on 20).
      gc();
      return youngGenerationBytes() <= YOUNG_SHRUNK_BYTES;
    };
  } catch {
    return undefined;
  }
}

/**
 * malloc_trim(0) once, now, on the thread pool: for a start-up phase that freed much before the next one
 * allocates. A no-op without the native core's trim.
 */
export function trimNativeMemory(): void {
  loadNative()
    ?.trimMemory?.()
    .catch(() => undefined);
}

export interface MemoryTrimOptions {
  /** malloc_trim(0) on the thread pool (the native core's), if any. */
  trim?: () => Promise<boolean>;
  /** The full collection, if any: true when the young generation shrank, false to try again after another quiet spell. */
  reduceHeap?: () => boolean;
  /** The check's period (tests shorten it). */
  checkMs?: number;
  /** The share of the time since its last call that the event loop was busy (default: this thread's). */
  utilization?: () => number;
}

/** The event loop's utilization since the last call, for this thread. */
function loopUtilization(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    return utilization;
  };
}

export class MemoryTrim {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private checks = 0;
  private quietChecks = 0;
  /** Work happened since the heap was last shrunk (start-up counts as work). */
  private busySinceReduced = true;
  /** Collections in this quiet spell that did not shrink the heap. */
  private attempts = 0;
  private readonly utilization: () => number;
  private readonly trim: (() => Promise<boolean>) | undefined;
  private readonly reduceHeap: (() => boolean) | undefined;
  private readonly checkMs: number;

  constructor(
    private readonly log: Pick<Logger, 'debug'>,
    options: MemoryTrimOptions = { trim: loadNative()?.trimMemory, reduceHeap: heapReducer() },
  ) {
    this.trim = options.trim;
    this.reduceHeap = options.reduceHeap;
    this.checkMs = options.checkMs ?? CHECK_MS;
    this.utilization = options.utilization ?? loopUtilization();
  }

  start(): void {
    if ((!this.trim && !this.reduceHeap) || this.timer) return;
    this.utilization();
    this.schedule();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    this.timer = setTimeout(() => this.check(), this.checkMs);
    this.timer.unref();
  }

  private check(): void {
    if (!this.timer) return;
    this.schedule();
    const utilization = this.utilization();
    let trimNow = this.checks++ % TRIM_EVERY_CHECKS === 0;
    if (utilization >= QUIET_UTILIZATION) {
      this.busySinceReduced = true;
      this.quietChecks = 0;
      this.attempts = 0;
    } else if (++this.quietChecks >= QUIET_CHECKS && this.busySinceReduced && this.reduceHeap) {
      const t0 = performance.now();
      const shrunk = this.reduceHeap();
      // Tried again after as many quiet checks again (not at once: see heapReducer), a few times per spell.
      if (shrunk || ++this.attempts >= MAX_ATTEMPTS) this.busySinceReduced = false;
      this.quietChecks = 0;
      this.log.debug({ ms: Math.round(performance.now() - t0), shrunk }, 'quiet: heap collected');
      // The collection's own time is not work that calls for another.
      this.utilization();
      trimNow = true;
    }
    if (!trimNow || !this.trim || this.running) return;
    this.running = true;
    this.trim()
      .catch((e: unknown) => this.log.debug({ err: String(e) }, 'malloc_trim failed'))
      .finally(() => {
        this.running = false;
      });
  }
}
