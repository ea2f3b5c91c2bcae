// The Piscina worker entry: dispatches a task by name (built-in) or by module URL + export (family).
import { builtinTasks } from './tasks.js';
import { importTypeScript } from './typescript.js';

interface TaskMessage {
  readonly task?: string;
  readonly module?: string;
  readonly fn?: string;
  readonly payload: unknown;
}

const modules = new Map<string, Promise<Record<string, unknown>>>();

export default async function runTask(message: TaskMessage): Promise<unknown> {
  if (message.module) {
    let mod = modules.get(message.module);
    if (!mod) {
      mod = importModule(message.module);
      modules.set(message.module, mod);
    }
    const fn = (await mod)[message.fn ?? 'default'];
    if (typeof fn !== 'function') throw new Error(`worker task ${message.module}#${message.fn} is not a function`);
    return fn(message.payload);
  }
  const task = message.task ? builtinTasks[message.task] : undefined;
  if (!task) throw new Error(`unknown worker task "${message.task}"`);
  return task(message.payload);
}

/** A family's worker module is TypeScript when the host runs from its sources (workers/typescript.ts). */
async function importModule(url: string): Promise<Record<string, unknown>> {
  if (/\.[cm]?ts$/.test(new URL(url).pathname)) return importTypeScript(url);
  return (await import(url)) as Record<string, unknown>;
}
