// The worker pool: a task past workers.taskTimeoutMs is aborted with a `timeout` refusal (its thread
// replaced), the budget runs from the start of the task's work (not from the queue, nor from a thread's
// one-time module load), and a bulk task holding its lane never delays a task in the interactive lane.
import t from 'tap';
import { PiscinaPool } from '../../../src/host/workers/pool.js';
import { isRefusal } from '../../../src/sdk/refusals.js';

const busy = { module: new URL('../../fixtures/workers/busy-task.ts', import.meta.url).href, fn: 'spin' };
const slowImport = { module: new URL('../../fixtures/workers/slow-import-task.ts', import.meta.url).href, fn: 'quick' };

t.test('a task past the budget is aborted and refused as timeout; the lane then serves again', async (t) => {
  // The budget runs from the task's start, not a thread's boot (which takes seconds on a loaded machine).
  const pool = new PiscinaPool({ threads: 1, interactiveThreads: 1, idleTimeoutMs: 5_000, taskTimeoutMs: 3_000 });
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
  const slow = pool.run(busy, { ms: 4_000 }, { lane: 'bulk' });
  await new Promise((r) => setTimeout(r, 200));
  const t0 = performance.now();
  t.equal(await pool.run('echo', 'hi'), 'hi');
  const took = performance.now() - t0;
  t.ok(took < 2_500, `interactive echo answered in ${took.toFixed(0)} ms while bulk spun for 4 s`);
  await slow;
});

t.test(
  'the budget runs from the start of a task, not from the queue: tasks queued behind others are not refused',
  async (t) => {
    // Three tasks of 1 s each on one thread under a 2.5 s budget: the third waits 2 s in the queue. A budget
    // counted from the queue refused it (2 s + 1 s > 2.5 s); each task's own work is well within it.
    const pool = new PiscinaPool({ threads: 1, interactiveThreads: 1, idleTimeoutMs: 5_000, taskTimeoutMs: 2_500 });
    t.teardown(() => pool.close());
    await pool.run(busy, { ms: 1 }); // boot the thread and load the module first
    const outcomes = await Promise.all(
      [0, 1, 2].map((i) =>
        pool.run<number>(busy, { ms: 1_000 }).then(
          () => `task ${i} answered`,
          (e: unknown) => `task ${i} refused: ${isRefusal(e) ? e.code : String(e)}`,
        ),
      ),
    );
    t.same(outcomes, ['task 0 answered', 'task 1 answered', 'task 2 answered'], 'every queued task is answered');
    // The bound stays: a task that runs past the budget once started is still aborted.
    const err = await pool.run(busy, { ms: 60_000 }).then(
      () => null,
      (e: unknown) => e,
    );
    t.ok(isRefusal(err) && err.code === 'timeout', 'a task running past the budget is refused as timeout');
  },
);

t.test("a thread's one-time module load has a budget of its own, apart from the task's", async (t) => {
  // Import 1.5 s, work 1.5 s, budget 2.5 s: each part fits, the two together would not.
  const pool = new PiscinaPool({ threads: 1, interactiveThreads: 1, idleTimeoutMs: 5_000, taskTimeoutMs: 2_500 });
  t.teardown(() => pool.close());
  await pool.run('echo', null); // the thread boots outside the test
  const n = await pool.run<number>(slowImport, { ms: 1_500 }).catch((e: unknown) => e);
  t.type(n, 'number', `the first task after a slow import is answered (${isRefusal(n) ? n.code : 'ok'})`);
});
