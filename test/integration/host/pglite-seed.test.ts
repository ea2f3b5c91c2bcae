// A new embedded database starts from the initialised archive the build writes into the package
// (dist/pglite/initdb-<key>.tar.gz) instead of running initdb; an archive of another engine build is not
// used, and a broken one leaves the directory as it was and the engine runs initdb (the fallback). Real
// PGlite throughout: the archive is made by a real initdb, and every database here is opened and queried.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { packDirectory, unpackArchive } from '../../../src/host/db/engines/pglite-archive.js';
import { openPglite } from '../../../src/host/db/engines/pglite.js';
import {
  archiveName,
  makeInitdbArchive,
  PACKAGED_ARCHIVES,
  seedDataDir,
} from '../../../src/host/db/engines/pglite-template.js';
import { LOCK_FILE } from '../../../src/host/db/owner-lock.js';

// Two real initdb runs (the build's archive and the fallback): minutes on a busy machine.
t.setTimeout(600_000);

const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-pglite-seed-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

function logged() {
  const lines: Array<{ level: string; msg: string; obj: object }> = [];
  return {
    lines,
    info: (obj: object, msg: string) => lines.push({ level: 'info', msg, obj }),
    warn: (obj: object, msg: string) => lines.push({ level: 'warn', msg, obj }),
  };
}

t.test('the archive format: folders (empty ones too) and files round-trip; tar reads it', async (t) => {
  const from = path.join(dir, 'tree');
  mkdirSync(path.join(from, 'a', 'empty'), { recursive: true });
  mkdirSync(path.join(from, 'pg_logical', 'snapshots'), { recursive: true });
  writeFileSync(path.join(from, 'PG_VERSION'), '17\n');
  writeFileSync(path.join(from, 'a', 'zero'), '');
  writeFileSync(path.join(from, 'a', 'block'), Buffer.alloc(512, 7));
  writeFileSync(path.join(from, 'a', 'odd'), Buffer.from(Array.from({ length: 70_001 }, (_, i) => i % 251)));
  const file = path.join(dir, 'tree.tar.gz');
  packDirectory(from, file);
  const to = path.join(dir, 'tree-out');
  await unpackArchive(file, to);
  for (const f of ['PG_VERSION', 'a/zero', 'a/block', 'a/odd'])
    t.same(readFileSync(path.join(to, f)), readFileSync(path.join(from, f)), `${f} is byte-identical`);
  t.same(readdirSync(path.join(to, 'a', 'empty')), [], 'an empty folder is kept');
  t.ok(existsSync(path.join(to, 'pg_logical', 'snapshots')), 'a nested empty folder is kept');
  const listed = spawnSync('tar', ['tzf', file], { encoding: 'utf8' });
  if (listed.status === 0) t.match(listed.stdout, /^a\/odd$/m, 'GNU tar lists it (plain ustar)');
});

t.test('the reader refuses what the writer never writes, and a cut archive', async (t) => {
  const from = path.join(dir, 'linked');
  mkdirSync(from);
  writeFileSync(path.join(from, 'target'), 'x');
  symlinkSync('target', path.join(from, 'link'));
  const withLink = path.join(dir, 'link.tar.gz');
  const tar = spawnSync('tar', ['--format=ustar', '-czf', withLink, '-C', from, 'link']);
  if (tar.status === 0)
    await t.rejects(
      unpackArchive(withLink, path.join(dir, 'link-out')),
      /type "SymbolicLink"/,
      'a symbolic link is refused',
    );
  const escaping = path.join(dir, 'escape.tar.gz');
  const esc = spawnSync('tar', ['--format=ustar', '-P', '-czf', escaping, '-C', from, '../linked/target']);
  if (esc.status === 0)
    await t.rejects(unpackArchive(escaping, path.join(dir, 'escape-out')), /\.\./, 'a path with .. is refused');

  const whole = readFileSync(path.join(dir, 'tree.tar.gz'));
  const cut = path.join(dir, 'cut.tar.gz');
  writeFileSync(cut, whole.subarray(0, Math.floor(whole.byteLength / 2)));
  await t.rejects(unpackArchive(cut, path.join(dir, 'cut-out')), 'a truncated archive is refused');
});

let archives = '';

t.test("the build's archive: made by a real initdb once per engine build", async (t) => {
  archives = path.join(dir, 'archives');
  mkdirSync(archives);
  const stale = path.join(archives, 'initdb-0000000000000000.tar.gz');
  writeFileSync(stale, 'an older engine build');
  const made = await makeInitdbArchive(archives);
  t.ok(made.made, 'made now');
  t.equal(path.basename(made.file), archiveName(), "named by this engine build's key");
  t.notOk(existsSync(stale), "another build's archive is removed");
  const entries = spawnSync('tar', ['tzf', made.file], { encoding: 'utf8' }).stdout;
  if (entries) t.match(entries, /^pg_logical\/snapshots\/$/m, "PostgreSQL's empty folders are in it");
  t.same(await makeInitdbArchive(archives), { file: made.file, made: false }, 'kept while its key matches');
});

t.test('a first start is seeded from the archive: no initdb, and the database works', async (t) => {
  const dataDir = path.join(dir, 'seeded');
  mkdirSync(dataDir);
  writeFileSync(path.join(dataDir, LOCK_FILE), '');
  const log = logged();
  const engine = await openPglite(dataDir, { seed: { archives }, log });
  t.teardown(() => engine.close());
  t.match(log.lines, [{ level: 'info', msg: /seeded from the packaged initialised one/ }]);
  const ext = await engine.pool.query<{ extname: string }>('SELECT extname FROM pg_extension ORDER BY 1');
  t.same(
    ext.rows.map((r) => r.extname),
    ['pg_trgm', 'plpgsql', 'vector'],
    'the extensions are there',
  );
  await engine.pool.query('CREATE TABLE t (id int PRIMARY KEY, e vector(2))');
  await engine.pool.query(`INSERT INTO t VALUES (1, '[1,2]')`);
  await engine.close();
  t.notOk(
    readdirSync(dataDir).some((e) => e.startsWith('.exocortex-seed-')),
    'no staging folder is left',
  );

  const again = logged();
  const reopened = await openPglite(dataDir, { seed: { archives }, log: again });
  t.teardown(() => reopened.close());
  t.same(again.lines, [], 'a directory with a database is never seeded again');
  t.same((await reopened.pool.query('SELECT id FROM t')).rows, [{ id: 1 }], 'what was written persists');
});

t.test("another engine build's archive is not used", async (t) => {
  const other = path.join(dir, 'other-build');
  mkdirSync(other);
  writeFileSync(path.join(other, 'initdb-0123456789abcdef.tar.gz'), readFileSync(path.join(archives, archiveName())));
  const dataDir = path.join(dir, 'other');
  t.same(await seedDataDir(dataDir, { archives: other }), {}, 'nothing copied: the engine runs initdb');
  t.notOk(existsSync(path.join(dataDir, 'PG_VERSION')));
});

t.test('a broken archive leaves the directory as it was, and the engine runs initdb (the fallback)', async (t) => {
  const broken = path.join(dir, 'broken');
  mkdirSync(broken);
  const whole = readFileSync(path.join(archives, archiveName()));
  writeFileSync(path.join(broken, archiveName()), whole.subarray(0, whole.byteLength - 4096));
  const dataDir = path.join(dir, 'fallback');
  mkdirSync(dataDir);
  writeFileSync(path.join(dataDir, LOCK_FILE), '');
  const seeded = await seedDataDir(dataDir, { archives: broken });
  t.match(seeded, { problem: /initdb-/ }, `refused: ${seeded.problem}`);
  t.same(readdirSync(dataDir), [LOCK_FILE], 'only the lock file is left');

  const log = logged();
  const engine = await openPglite(dataDir, { seed: { archives: broken }, log });
  t.teardown(() => engine.close());
  t.match(log.lines, [{ level: 'warn', msg: /unusable; running initdb/ }]);
  t.ok(existsSync(path.join(dataDir, 'PG_VERSION')), 'initdb made the database');
  const ext = await engine.pool.query<{ extname: string }>('SELECT extname FROM pg_extension ORDER BY 1');
  t.same(
    ext.rows.map((r) => r.extname),
    ['pg_trgm', 'plpgsql', 'vector'],
  );
});

t.test(
  'the built package carries this engine build’s archive',
  { skip: !existsSync(PACKAGED_ARCHIVES) && 'dist/ is not built (npm run build writes it)' },
  async (t) => {
    t.ok(existsSync(path.join(PACKAGED_ARCHIVES, archiveName())), `dist/pglite/${archiveName()}`);
  },
);
