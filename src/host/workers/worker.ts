// The Piscina worker entry: dispatches a task by name (built-in) or by module URL + export (family).
// The thread tells the pool when a task's work starts, after the task's function is ready (its module
// imported, its tables loaded: once per thread), and before such a set-up too: the pool's time budget
// runs from each of these moments, never from the time the task waited in the queue (see pool.ts).
import { parentPort } from 'node:worker_threads';
import { heapReducer, MemoryTrim, QUIET_LOG } from '../memory-trim.js';
import { builtinSetup, builtinTasks } from './tasks.js';
import { importTypeScript } from './typescript.js';

interface TaskMessage {
  readonly task?: string;
  readonly module?: string;
  readonly fn?: string;
  readonly payload: unknown;
  /** The pool's id for this run, echoed in the started message. */
  readonly run?: number;
}

/** The started message's key (pool.ts reads it; a plain string, so both sides need no shared import). */
const TASK_STARTED = 'exocortexTaskStarted';

// A thread collects its garbage once quiet (memory-trim.ts): an index pass leaves tens of MiB in a bulk
// thread, which waits up to workers.idleTimeoutMs before it exits. Its timers run while it waits for work
// because the pool waits with Atomics.waitAsync (pool.ts).
new MemoryTrim(QUIET_LOG, { reduceHeap: heapReducer() }).start();

const modules = new Map<string, Promise<Record<string, unknown>>>();
const setUp = new Map<string, Promise<unknown>>();

export default async function runTask(message: TaskMessage): Promise<unknown> {
  const fn = await taskFunction(message);
  started(message);
  return fn(message.payload);
}

function started(message: TaskMessage): void {
  if (message.run !== undefined) parentPort?.postMessage({ [TASK_STARTED]: message.run });
}

async function taskFunction(message: TaskMessage): Promise<(payload: unknown) => unknown> {
  if (message.module) {
    let mod = modules.get(message.module);
    if (!mod) {
      started(message); // the import is bounded by a budget of its own
      mod = importModule(message.module);
      modules.set(message.module, mod);
    }
    const fn = (await mod)[message.fn ?? 'default'];
    if (typeof fn !== 'function') throw new Error(`worker task ${message.module}#${message.fn} is not a function`);
    return fn as (payload: unknown) => unknown;
  }
  const task = message.task ? builtinTasks[message.task] : undefined;
  if (!task) throw new Error(`unknown worker task "${message.task}"`);
  const setup = builtinSetup[message.task!];
  if (setup) {
    let ready = setUp.get(message.task!);
    if (!ready) {
      started(message); // the set-up is bounded by a budget of its own
      ready = setup();
      setUp.set(message.task!, ready);
    }
    await ready;
  }
  return task;
}

/** A family's worker module is TypeScript when the host runs from its sources (workers/typescript.ts). */
async function importModule(url: string): Promise<Record<string, unknown>> {
  if (/\.[cm]?ts$/.test(new URL(url).pathname)) return importTypeScript(url);
  return (await import(url)) as Record<string, unknown>;
}
