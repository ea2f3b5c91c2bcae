// A pool thread left idle collects what its last tasks left (worker.ts's quiet collection): an idle
// thread waits for work without blocking its event loop (Piscina's async atomics), so its timers run.
// A thread blocked in Atomics.wait kept an index pass's garbage, tens of MiB per thread, until it exited.
import t from 'tap';
import { QUIET_CHECKS } from '../../../src/host/memory-trim.js';
import { PiscinaPool } from '../../../src/host/workers/pool.js';

const tasks = new URL('../../fixtures/workers/litter-task.ts', import.meta.url).href;
const MiB = 1024 * 1024;

t.test('an idle pool thread collects the garbage its last task left', async (t) => {
  const pool = new PiscinaPool({ threads: 1, interactiveThreads: 1, idleTimeoutMs: 120_000, taskTimeoutMs: 0 });
  t.teardown(() => pool.close());
  const littered = await pool.run<number>({ module: tasks, fn: 'litter' }, { objects: 600_000 }, { lane: 'bulk' });
  t.ok(littered > 40 * MiB, `the task left ${(littered / MiB).toFixed(0)} MiB in use`);
  // The thread's quiet check runs each second; the collection comes after QUIET_CHECKS quiet ones.
  await new Promise((r) => setTimeout(r, (QUIET_CHECKS + 3) * 1_000));
  const after = await pool.run<number>({ module: tasks, fn: 'heapUsed' }, null, { lane: 'bulk' });
  t.ok(
    after < littered / 2,
    `in use once idle: ${(after / MiB).toFixed(0)} MiB (after the task: ${(littered / MiB).toFixed(0)})`,
  );
});
