// The worker pool: a task past workers.taskTimeoutMs is aborted with a `timeout` refusal (its thread
// replaced), and a bulk task holding its lane never delays a task in the interactive lane.
import t from 'tap';
import { PiscinaPool } from '../../../src/host/workers/pool.js';
import { isRefusal } from '../../../src/sdk/refusals.js';

const busy = { module: new URL('../../fixtures/workers/busy-task.ts', import.meta.url).href, fn: 'spin' };

t.test('a task past the budget is aborted and refused as timeout; the lane then serves again', async (t) => {
  // The budget covers a thread's boot too, which takes seconds on a loaded machine: leave room for it.
  const pool = new PiscinaPool({ threads: 1, interactiveThreads: 1, idleTimeoutMs: 5_000, taskTimeoutMs: 10_000 });
  t.teardown(() => pool.close());
  await pool.run(busy, { ms: 1 }, { lane: 'bulk' }); // boot the thread and load the module first
  const t0 = performance.now();
  const err = await pool.run(busy, { ms: 90_000 }, { lane: 'bulk' }).then(
    () => null,
    (e: unknown) => e,
  );
  const took = performance.now() - t0;
  t.ok(isRefusal(err) && err.code === 'timeout', 'refused as timeout');
  t.ok(took < 30_000, `aborted after ${took.toFixed(0)} ms, not after the task's 90 s`);
  t.equal(await pool.run('echo', 'again', { lane: 'bulk' }), 'again', 'the lane has a fresh thread');
});

t.test('an interactive task is answered while the bulk lane is busy', async (t) => {
  const pool = new PiscinaPool({ threads: 1, interactiveThreads: 1, idleTimeoutMs: 5_000, taskTimeoutMs: 0 });
  t.teardown(() => pool.close());
  await Promise.all([pool.run('echo', null, { lane: 'bulk' }), pool.run('echo', null)]);
  const slow = pool.run(busy, { ms: 6_000 }, { lane: 'bulk' });
  await new Promise((r) => setTimeout(r, 200));
  const t0 = performance.now();
  t.equal(await pool.run('echo', 'hi'), 'hi');
  const took = performance.now() - t0;
  t.ok(took < 3_000, `interactive echo answered in ${took.toFixed(0)} ms while bulk spun for 6 s`);
  await slow;
});
