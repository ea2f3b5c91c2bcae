// `node --import ./scripts/ts-loader/register.mjs file.ts`: runs this checkout's TypeScript without tsx
// (the tests' loader, tap's node-arg). Prebuilding (build.mjs, part of `npm test`) makes each test
// process read compiled files instead of transforming them; see hooks.mjs.
import { register } from 'node:module';
import { fileURLToPath } from 'node:url';

register(new URL('./hooks.mjs', import.meta.url));
// Worker threads do not inherit these hooks on Node 20: the host's workers register this file themselves
// (src/host/workers/typescript.ts).
process.env.EXOCORTEX_TS_LOADER = import.meta.url;

// New PGlite databases start from an initialised template instead of running initdb
// (src/host/db/engines/pglite-template.ts), and test servers from a migrated one (src/host/testing/harness.ts),
// both kept in the checkout's .cache/pglite across runs; the CLI processes a test starts inherit it.
process.env.EXOCORTEX_PGLITE_TEMPLATES ??= fileURLToPath(new URL('../../.cache/pglite', import.meta.url));

// tap loads its process-info recorder into every test process (for coverage and `tap --changed`, neither of
// which this suite uses) and names it in the test process's NODE_OPTIONS, so every process a test starts
// would load it too: module hooks that read, post and measure each module, ~0.5 CPU-s of a CLI command's
// 0.35. It is removed from NODE_OPTIONS here (and its spawn listener that would add it back), so the
// processes tests start run as users run them.
if (process.env.TAP === '1') {
  globalThis[Symbol.for('process-on-spawn@*:singletonId')]?.listeners.splice(0);
  const options = process.env.NODE_OPTIONS?.replace(
    /"?--(import|loader)=[^\s"]*@tapjs\/processinfo[^\s"]*"?/g,
    '',
  ).trim();
  if (options) process.env.NODE_OPTIONS = options;
  else delete process.env.NODE_OPTIONS;
}

// EXOCORTEX_TEST_CPU_LOG=file: each test file's process appends, at exit, the CPU seconds it and the children
// it reaped used (user + system, from /proc/self/stat), its name, and when it started and exited (ms since
// the epoch), for finding the suite's costly files and where the run's wall time goes.
if (process.env.EXOCORTEX_TEST_CPU_LOG && /\.test\.ts$/.test(process.argv[1] ?? '')) {
  const { appendFileSync, readFileSync } = await import('node:fs');
  process.on('exit', () => {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
    const wall = `${Math.round(performance.timeOrigin)}\t${Date.now()}`;
    appendFileSync(process.env.EXOCORTEX_TEST_CPU_LOG, `${(ticks / 100).toFixed(1)}\t${process.argv[1]}\t${wall}\n`);
  });
}
