// A pool thread starts with the process's flags less its preloads, the TypeScript loader excepted: a test
// runner's module hooks in a heap-limited thread made a task's out-of-memory fatal to the whole process on
// Node 24 (worker-pool.hostile-tasks.test.ts under tap).
import t from 'tap';
import { workerExecArgv } from '../../../src/host/workers/pool.js';

t.test('preloads are dropped, the TypeScript loader and other flags kept', async (t) => {
  const loader = 'file:///repo/scripts/ts-loader/register.mjs';
  t.same(
    workerExecArgv([
      '--import=file:///repo/node_modules/@tapjs/mock/dist/esm/import.mjs',
      '--enable-source-maps',
      '--import',
      'file:///repo/node_modules/@tapjs/processinfo/dist/esm/import.mjs',
      `--import=${loader}`,
      '-r',
      'some-hook',
      '--import',
      'tsx',
      '--loader=other',
      '--max-semi-space-size=16',
    ]),
    ['--enable-source-maps', `--import=${loader}`, '--import', 'tsx', '--max-semi-space-size=16'],
  );
  t.same(workerExecArgv([]), []);
});
