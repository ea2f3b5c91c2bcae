// The worker pool service (Piscina), in two lanes so bulk work never starves a tool call: `bulk` (the
// index pipeline's parses, embedding chunks) and `interactive` (everything a call waits on). Every task
// runs under a time budget and is aborted past it; every thread runs under heap and stack limits, and a
// thread that dies is replaced while its caller gets a typed refusal. No task may end the process.
// Started lazily, so startup never waits for it.
import os from 'node:os';
import { Piscina } from 'piscina';
import { Refusal } from '../../sdk/refusals.js';
import type { WorkerLane, WorkerPool } from '../../sdk/types.js';

export interface WorkerPoolSettings {
  /** Threads of the bulk lane (0 = auto). */
  readonly threads: number;
  /** Threads of the interactive lane (default 1). */
  readonly interactiveThreads?: number;
  readonly idleTimeoutMs: number;
  /** Longest one task may run before it is aborted (its thread is replaced); 0 or absent = no budget. */
  readonly taskTimeoutMs?: number;
  /** Old-generation heap of one worker thread, in MiB; a thread past it is ended and replaced (0 = V8's default). */
  readonly maxHeapMb?: number;
  /** Stack of one worker thread, in MiB (0 = Node's default, 4). */
  readonly stackSizeMb?: number;
}

const PRELOAD = /^(?:--import|--require|-r|--loader|--experimental-loader)$/;
const PRELOAD_INLINE = /^(--import|--require|--loader|--experimental-loader)=(.*)$/;

/** The loader the `tsx` command preloads (`--import file:///…/node_modules/tsx/dist/loader.mjs`). */
const TSX_COMMAND_LOADER = /[\\/]node_modules[\\/]tsx[\\/]dist[\\/]loader\.mjs$/;

/**
 * A preload a pool thread keeps: the one that loads TypeScript when the host runs from its sources — the
 * checkout's loader, `--import tsx`, or the loader the `tsx` command itself preloads (`npx tsx bench/….ts`, the
 * benches' documented usage, whose pool threads otherwise failed on their first `.ts` import).
 */
const loadsTypeScript = (module: string): boolean =>
  module === 'tsx' ||
  module === process.env.EXOCORTEX_TS_LOADER ||
  module.endsWith('ts-loader/register.mjs') ||
  TSX_COMMAND_LOADER.test(module);

/** Flags of a thread's own environment, which a pool thread keeps; the value of `--conditions`/`-C` too. */
const THREAD_FLAG =
  /^--(?:enable-source-maps|no-warnings|disable-warning=.*|trace-warnings|trace-uncaught|(?:no-)?experimental-[a-z-]+(?:=.*)?|conditions=.*)$/;
const THREAD_FLAG_WITH_VALUE = /^(?:--conditions|-C|--disable-warning)$/;

/**
 * A pool thread's flags: of the process's own, the TypeScript loader when the host runs from its sources
 * and the flags of a thread's own environment (source maps, warnings, experimental features, conditions).
 * Other preloads are left out: a test runner's module hooks in a heap-limited thread can turn a task's
 * out-of-memory, which must end that thread only, into a fatal error of the whole process (Node 24 with
 * @tapjs/mock's hooks did). V8's and the process's flags (`--max-old-space-size`, `--title`, …) are left
 * out too: they already hold for every thread, and a Worker given one refuses to start
 * (ERR_WORKER_INVALID_EXEC_ARGV), which ended the server's start.
 */
export function workerExecArgv(execArgv: readonly string[] = process.execArgv): string[] {
  const out: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const flag = execArgv[i]!;
    const inline = PRELOAD_INLINE.exec(flag);
    if (inline) {
      if (loadsTypeScript(inline[2]!)) out.push(flag);
    } else if (PRELOAD.test(flag)) {
      const module = execArgv[++i] ?? '';
      if (loadsTypeScript(module)) out.push(flag, module);
    } else if (THREAD_FLAG_WITH_VALUE.test(flag)) {
      out.push(flag, execArgv[++i] ?? '');
    } else if (THREAD_FLAG.test(flag)) {
      out.push(flag);
    }
  }
  return out;
}

/** The key of a thread's "this run starts now" message (worker.ts posts it). */
const TASK_STARTED = 'exocortexTaskStarted';

export class PiscinaPool implements WorkerPool {
  private readonly lanes = new Map<WorkerLane, Piscina>();
  /** Runs under a budget, by id: what to do when their thread says the work (or its set-up) starts. */
  private readonly starting = new Map<number, () => void>();
  private runs = 0;
  constructor(private readonly settings: WorkerPoolSettings) {}

  /** Auto: one core stays with the main thread (the event loop) and embedded PGlite's thread;
   * on 2 cores one worker indexed 1,433–1,488 notes/s against 1,321–1,355 with two (bench/index-cold). */
  private threads(lane: WorkerLane): number {
    if (lane === 'interactive') return Math.max(1, this.settings.interactiveThreads ?? 1);
    return this.settings.threads > 0 ? this.settings.threads : Math.max(1, Math.min(4, os.availableParallelism() - 1));
  }

  private resourceLimits(): { maxOldGenerationSizeMb?: number; stackSizeMb?: number } {
    const limits: { maxOldGenerationSizeMb?: number; stackSizeMb?: number } = {};
    if (this.settings.maxHeapMb) limits.maxOldGenerationSizeMb = this.settings.maxHeapMb;
    if (this.settings.stackSizeMb) limits.stackSizeMb = this.settings.stackSizeMb;
    return limits;
  }

  private piscina(lane: WorkerLane): Piscina {
    let pool = this.lanes.get(lane);
    if (!pool) {
      const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
      pool = new Piscina({
        filename: new URL(`./worker${ext}`, import.meta.url).href,
        // The interactive lane's threads stay once started: a tool call then never waits for a thread to
        // boot and load its tables again (cl100k's: ~1.2 s of CPU with the boot, seconds of wall time on a
        // loaded machine, for the first result over the budget's bytes after every idle minute).
        minThreads: lane === 'interactive' ? this.threads(lane) : 0,
        maxThreads: this.threads(lane),
        idleTimeout: this.settings.idleTimeoutMs,
        // An idle thread waits for its next task with Atomics.waitAsync, not Atomics.wait: a blocked
        // thread never runs its timers, so it could not collect what its last tasks left (worker.ts).
        atomics: 'async',
        resourceLimits: this.resourceLimits(),
        execArgv: workerExecArgv(),
      });
      pool.on('message', (m: unknown) => {
        const run = (m as Record<string, unknown> | null)?.[TASK_STARTED];
        if (typeof run === 'number') this.starting.get(run)?.();
      });
      this.lanes.set(lane, pool);
    }
    return pool;
  }

  async run<T = unknown>(
    task: string | { module: string; fn: string },
    payload: unknown,
    options: { signal?: AbortSignal; lane?: WorkerLane } = {},
  ): Promise<T> {
    const budget = this.settings.taskTimeoutMs ?? 0;
    const name = typeof task === 'string' ? task : (task.fn ?? 'default');
    const run = budget > 0 ? ++this.runs : undefined;
    const message =
      typeof task === 'string' ? { task, payload, run } : { module: task.module, fn: task.fn, payload, run };
    // The budget runs from the moment the thread starts the task's work (and, before it, from the start of
    // a set-up the thread does once), never from the queue: a task queued behind others on a loaded
    // machine is not refused for their time. The wait in the queue is bounded by the caller's own signal
    // (a tool call's deadline) and by the tasks ahead, each bounded in turn.
    const budgetOver = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    if (run !== undefined)
      this.starting.set(run, () => {
        clearTimeout(timer);
        timer = setTimeout(() => budgetOver.abort(), budget);
      });
    const signal = options.signal ? AbortSignal.any([budgetOver.signal, options.signal]) : budgetOver.signal;
    try {
      return (await this.piscina(options.lane ?? 'interactive').run(message, { signal })) as T;
    } catch (e) {
      if (budgetOver.signal.aborted && !options.signal?.aborted) {
        throw new Refusal('timeout', { timeoutMs: budget, setting: 'workers.taskTimeoutMs', task: name });
      }
      // Piscina replaces a thread that exits; the caller learns why in the catalog's terms, not as a bug.
      const reason = this.deathOf(e);
      if (reason) throw new Refusal('worker_failed', { task: name, reason });
      throw e;
    } finally {
      clearTimeout(timer);
      if (run !== undefined) this.starting.delete(run);
    }
  }

  /** Why the task's thread died, when the error says it did (else the task's own error, passed on as it is). */
  private deathOf(e: unknown): string | undefined {
    const code = (e as { code?: unknown } | null)?.code;
    if (code === 'ERR_WORKER_OUT_OF_MEMORY')
      return `it ran out of its ${this.settings.maxHeapMb || 'default'} MiB heap (workers.maxHeapMb)`;
    if (code === 'ERR_WORKER_INIT_FAILED') return 'its thread failed to start';
    // Piscina's words for a thread that exited under a running task.
    const exited = e instanceof Error ? /^worker exited with code: (-?\d+)/.exec(e.message) : null;
    return exited ? `its thread exited with code ${exited[1]}` : undefined;
  }

  warm(only?: WorkerLane): void {
    // One trivial task per thread makes Piscina boot them all; what they load stays loaded until idleTimeout.
    for (const lane of only ? [only] : (['bulk', 'interactive'] as const)) {
      for (let i = 0; i < this.threads(lane); i++)
        this.piscina(lane)
          .run({ task: 'echo', payload: null })
          .catch(() => undefined);
    }
  }

  stats(): { threads: number; queued: number; completed: number } {
    let threads = 0,
      queued = 0,
      completed = 0;
    for (const pool of this.lanes.values()) {
      threads += pool.threads.length;
      queued += pool.queueSize;
      completed += pool.completed;
    }
    return { threads, queued, completed };
  }

  async close(): Promise<void> {
    const pools = [...this.lanes.values()];
    this.lanes.clear();
    await Promise.all(pools.map((p) => p.destroy()));
  }
}
