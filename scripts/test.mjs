// `npm test` (and test:unit, test:integration): prebuild the TypeScript mirror, then run tap with the
// temporary folder on a RAM-backed filesystem, removed afterwards. Every test server copies a migrated
// PGlite data directory (~1,100 files, 40 MB) into the temporary folder and deletes it at close; on a disk
// mounted with online discard that copy and delete cost as much CPU as the server's whole start (measured
// 4.7 against 2.2 CPU-s per server). The tests' files never leave the run's own folder.
//
// EXOCORTEX_TEST_TMPDIR chooses the folder the run's own folder is made in (`EXOCORTEX_TEST_TMPDIR=/tmp
// npm test` runs on disk); by default /dev/shm when it is a writable tmpfs with room, else the usual
// temporary folder. Arguments are passed to tap; tap runs on this Node (`node24 scripts/test.mjs` runs
// the suite on Node 24).
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, chmodSync, constants, mkdtempSync, readFileSync, rmSync, statfsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

await import('./ts-loader/build.mjs');

const TMPFS_MAGIC = 0x01021994;
const ROOM = 4 * 1024 ** 3;

function base() {
  if (process.env.EXOCORTEX_TEST_TMPDIR) return process.env.EXOCORTEX_TEST_TMPDIR;
  try {
    accessSync('/dev/shm', constants.W_OK);
    const fs = statfsSync('/dev/shm');
    if (fs.type === TMPFS_MAGIC && fs.bavail * fs.bsize >= ROOM) return '/dev/shm';
  } catch {
    // no /dev/shm here: the usual temporary folder
  }
  return os.tmpdir();
}

const dir = mkdtempSync(path.join(base(), 'exocortex-test-'));
// Like /tmp: the PostgreSQL servers tests start run as the `postgres` user, inside folders of this one.
chmodSync(dir, 0o1777);
console.log(`# temporary folder: ${dir}`);
// The user's cache directory too: what the CLIs the tests start keep there (the relay's cards, Node's
// compile cache) stays out of the home directory of whoever runs the suite.
const env = { ...process.env, TMPDIR: dir, XDG_CACHE_HOME: path.join(dir, 'xdg-cache') };

// The migrated PGlite template every test server copies (src/host/testing/harness.ts), made now if this
// checkout has none for its migrations yet: once, before the test files start, rather than by the first
// files at once under tap's timeout.
const loader = new URL('./ts-loader/register.mjs', import.meta.url).href;
const harness = new URL('../src/host/testing/harness.ts', import.meta.url).href;
const made = spawnSync(
  process.execPath,
  [
    '--import',
    loader,
    '--input-type=module',
    '-e',
    `const t = await (await import(${JSON.stringify(harness)})).pgliteTemplate(); console.log('# PGlite template: ' + t); process.exit(0);`,
  ],
  { stdio: 'inherit', env },
);
if (made.status !== 0) {
  rmSync(dir, { recursive: true, force: true });
  console.error('the migrated PGlite template could not be made');
  process.exit(1);
}
const tapPackage = fileURLToPath(new URL('../node_modules/tap/package.json', import.meta.url));
const tap = path.join(path.dirname(tapPackage), JSON.parse(readFileSync(tapPackage, 'utf8')).bin.tap);
const child = spawn(process.execPath, [tap, ...process.argv.slice(2)], {
  stdio: 'inherit',
  env,
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  rmSync(dir, { recursive: true, force: true });
  process.exit(code ?? (signal ? 1 : 0));
});
