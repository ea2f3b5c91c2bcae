// Host settings, section `workers`: The worker pool for CPU-bound work.
import { z } from 'zod';
import { section } from './section.js';

export const workersSection = section(
  'restart',
  z
    .object({
      threads: z
        .number()
        .int()
        .min(0)
        .max(64)
        .default(0)
        .describe(
          'Worker threads for parsing, diffs, regex and token counts (0 = CPU cores − 1, at least 1, at most 4).',
        ),
      idleTimeoutMs: z
        .number()
        .int()
        .min(0)
        .default(60000)
        .describe(
          'An idle thread of the bulk lane exits after this long; the interactive lane keeps its threads (and the tables they loaded).',
        ),
      interactiveThreads: z
        .number()
        .int()
        .min(1)
        .max(64)
        .default(1)
        .describe(
          'Threads of the interactive worker lane (tasks a tool call waits on); the bulk lane (indexing) has `threads`.',
        ),
      taskTimeoutMs: z
        .number()
        .int()
        .min(0)
        .default(15000)
        .describe(
          'Longest one worker task may run, counted from the moment its thread starts it (not from the queue; a thread’s one-time load of a module or table has a budget of its own); past it the task is aborted, its thread replaced, and the caller refused as timeout (a note whose parse runs past it is quarantined). 0 = no budget.',
        ),
      maxHeapMb: z
        .number()
        .int()
        .min(0)
        .default(1024)
        .describe(
          "Old-generation heap of one worker thread, in MiB. A task that grows past it ends its thread, not the process: the thread is replaced and the caller refused as worker_failed. 0 = V8's default.",
        ),
      stackSizeMb: z
        .number()
        .int()
        .min(0)
        .max(64)
        .default(4)
        .describe('Stack of one worker thread, in MiB (0 = Node’s default).'),
    })
    .strict()
    .prefault({})
    .describe('The worker-thread pool for CPU-heavy tasks.'),
);
