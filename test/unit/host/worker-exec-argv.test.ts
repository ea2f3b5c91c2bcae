// A pool thread starts with the process's flags less its preloads, the TypeScript loader excepted: a test
// runner's module hooks in a heap-limited thread made a task's out-of-memory fatal to the whole process on
// Node 24 (worker-pool.hostile-tasks.test.ts under tap).
import t from 'tap';
import { workerExecArgv } from '../../../src/host/workers/pool.js';

t.test("preloads are dropped, the TypeScript loader and a thread's own flags kept", async (t) => {
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
      '--conditions',
      'development',
      '--no-warnings',
    ]),
    ['--enable-source-maps', `--import=${loader}`, '--import', 'tsx', '--conditions', 'development', '--no-warnings'],
  );
  t.same(workerExecArgv([]), []);
});

t.test('the loader the tsx command preloads is kept, its preflight dropped', async (t) => {
  t.same(
    workerExecArgv([
      '--require',
      '/repo/node_modules/tsx/dist/preflight.cjs',
      '--import',
      'file:///repo/node_modules/tsx/dist/loader.mjs',
    ]),
    ['--import', 'file:///repo/node_modules/tsx/dist/loader.mjs'],
  );
});

t.test("V8's and the process's flags are left out: a Worker given one refuses to start", async (t) => {
  t.same(workerExecArgv(['--max-old-space-size=512', '--max-semi-space-size=16', '--title=exo', '--expose-gc']), []);
});

t.test('a server started with a V8 flag serves a call that runs on a pool thread', async (t) => {
  const { spawnSync } = await import('node:child_process');
  const script = `
    const { PiscinaPool } = await import(${JSON.stringify(new URL('../../../src/host/workers/pool.ts', import.meta.url).href)});
    const pool = new PiscinaPool({ threads: 1, idleTimeoutMs: 1000 });
    const n = await pool.run('echo', { ok: 1 }, { lane: 'interactive' });
    console.log('echoed', JSON.stringify(n));
    await pool.close();`;
  const run = spawnSync(
    process.execPath,
    [
      '--max-old-space-size=512',
      ...process.execArgv.filter((a) => a.includes('ts-loader')),
      '--input-type=module',
      '-e',
      script,
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
  t.equal(run.status, 0, run.stderr.slice(-1500));
  t.match(run.stdout, /^echoed {"ok":1}/m);
});

t.test("under the tsx command (the benches' usage), a pool thread loads the TypeScript worker", async (t) => {
  const { spawnSync } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const tsx = fileURLToPath(new URL('../../../node_modules/tsx/dist/cli.mjs', import.meta.url));
  const script = `
    import { PiscinaPool } from ${JSON.stringify(fileURLToPath(new URL('../../../src/host/workers/pool.ts', import.meta.url)))};
    const pool = new PiscinaPool({ threads: 1, idleTimeoutMs: 1000 });
    const n = await pool.run('echo', { ok: 2 }, { lane: 'bulk' });
    console.log('echoed', JSON.stringify(n));
    await pool.close();`;
  const run = spawnSync(process.execPath, [tsx, '--input-type=module', '-e', script], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, EXOCORTEX_TS_LOADER: '' },
  });
  t.equal(run.status, 0, run.stderr.slice(-1500));
  t.match(run.stdout, /^echoed {"ok":2}/m);
});
