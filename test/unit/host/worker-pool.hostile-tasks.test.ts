// The worker pool's policy against hostile input: a task that grows its heap without bound, or ends its own
// thread, costs that thread, never the process; the caller gets a typed worker_failed refusal and the lane
// serves the next task on a fresh thread. (Deadlines: worker-pool.lanes-and-budget.test.ts.)
import t from 'tap';
import { PiscinaPool } from '../../../src/host/workers/pool.js';
import { isRefusal } from '../../../src/sdk/refusals.js';

const hostile = (fn: string) => ({
  module: new URL('../../fixtures/workers/hostile-task.ts', import.meta.url).href,
  fn,
});

t.test('a task past workers.maxHeapMb ends its thread, not the process, and is refused as worker_failed', async (t) => {
  const pool = new PiscinaPool({ threads: 1, idleTimeoutMs: 5_000, taskTimeoutMs: 60_000, maxHeapMb: 64 });
  t.teardown(() => pool.close());
  const err = await pool.run(hostile('hog'), null).then(
    () => null,
    (e: unknown) => e,
  );
  t.ok(isRefusal(err) && err.code === 'worker_failed', `refused as worker_failed (${String(err)})`);
  t.match(String((err as Error).message), /workers\.maxHeapMb/, 'names the setting');
  t.equal(await pool.run('echo', 'again'), 'again', 'the lane has a fresh thread');
});

t.test('a task that exits its thread is refused as worker_failed; the lane serves again', async (t) => {
  const pool = new PiscinaPool({ threads: 1, idleTimeoutMs: 5_000, taskTimeoutMs: 60_000 });
  t.teardown(() => pool.close());
  for (const lane of ['interactive', 'bulk'] as const) {
    const err = await pool.run(hostile('exit'), null, { lane }).then(
      () => null,
      (e: unknown) => e,
    );
    t.ok(isRefusal(err) && err.code === 'worker_failed', `${lane}: refused as worker_failed (${String(err)})`);
    t.equal(await pool.run('echo', lane, { lane }), lane, `${lane}: the lane has a fresh thread`);
  }
});

t.test('a stack overflow in a task is the task’s error; the thread lives on', async (t) => {
  const pool = new PiscinaPool({ threads: 1, idleTimeoutMs: 5_000, taskTimeoutMs: 60_000, stackSizeMb: 4 });
  t.teardown(() => pool.close());
  const err = await pool.run(hostile('recurse'), { depth: 10_000_000 }).then(
    () => null,
    (e: unknown) => e,
  );
  t.ok(err instanceof RangeError, 'a RangeError reaches the caller');
  t.equal(await pool.run(hostile('recurse'), { depth: 1_000 }), 1_000, 'the same thread serves the next call');
});
