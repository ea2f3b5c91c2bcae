// A pass over a vault the index holds nothing of (a first index) boots the bulk lane's threads as soon as the
// pipeline starts, beside the watcher's start and the walk, instead of with the walk's first batch. A restart
// whose index holds notes warms nothing (pool-on-demand.test.ts: no thread after its pass).
import t from 'tap';
import type { WorkerPool } from '../../../src/sdk/types.js';
import { rig } from './pipeline-rig.js';

t.test('first index: the bulk lane is warmed once, before the first parse', async (t) => {
  const events: string[] = [];
  const spy = (shared: WorkerPool): WorkerPool => ({
    run(task, payload, options) {
      events.push(`run ${typeof task === 'string' ? task : task.fn} ${options?.lane ?? 'interactive'}`);
      return shared.run(task, payload, options);
    },
    warm(lane) {
      events.push(`warm ${lane ?? 'every lane'}`);
      shared.warm?.(lane);
    },
  });
  const r = await rig({}, {}, spy);
  t.teardown(() => r.close());
  r.pipeline.start();
  t.equal(await r.pipeline.whenReady(r.pipeline.vaultId, 30_000), true);
  t.equal(events[0], 'warm bulk', 'the bulk lane is warmed before anything runs in the pool');
  t.ok(events.includes('run parse-notes bulk'), 'the notes are then parsed in the bulk lane');
  t.equal(events.filter((e) => e.startsWith('warm')).length, 1, 'warmed once');
  t.ok(r.pipeline.status(r.pipeline.vaultId).indexed > 0, 'and indexed');
});
