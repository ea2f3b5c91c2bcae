// Every VaultFs operation on a temp vault: reads, strict UTF-8, size caps, create/replace/move/trash/unlink,
// the precondition refusals, symlink rules for reads and writes, list/walk filtering.

import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openVault } from '../../../src/host/vault/index.js';
import { writeHooks } from '../../../src/host/vault/writes.js';
import { Refusal } from '../../../src/sdk/refusals.js';
import type { VaultFs } from '../../../src/sdk/vault.js';

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'exo-vault-')));
t.teardown(() => fs.rmSync(tmp, { recursive: true, force: true }));
let n = 0;

async function fresh(): Promise<{ v: VaultFs; root: string }> {
  const root = path.join(tmp, `v${n++}`, 'vault');
  const v = await openVault(root);
  return { v, root };
}

async function refusal(p: Promise<unknown>): Promise<Refusal> {
  try {
    await p;
  } catch (e) {
    if (e instanceof Refusal) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

const B = (s: string) => Buffer.from(s);

t.test('openVault creates the root and reports native capabilities', async (t) => {
  const { v, root } = await fresh();
  t.ok(fs.statSync(root).isDirectory());
  t.same(v.capabilities, {
    openat2: true,
    tmpfile: true,
    renameNoReplace: true,
    statxMountId: true,
    namedStaging: false,
    engine: 'native',
  });
  t.equal(v.root, root);
  t.same(fs.readdirSync(root), [], 'the probes leave nothing behind');
  await v.close();
  await v.close();
  t.equal((await refusal(v.stat('a.md'))).code, 'service_unavailable', 'a closed vault refuses');
});

t.test('create: no clobber, parents created, hash reported', async (t) => {
  const { v, root } = await fresh();
  const r = await v.create('a/b/c.md', B('hello'));
  t.same(r, { path: 'a/b/c.md', contentHash: v.contentHash(B('hello')), size: 5 });
  t.equal(fs.readFileSync(path.join(root, 'a/b/c.md'), 'utf8'), 'hello');
  t.equal(fs.statSync(path.join(root, 'a/b/c.md')).mode & 0o777, 0o644);
  const e = await refusal(v.create('a/b/c.md', B('other')));
  t.equal(e.code, 'already_exists');
  t.same(e.details, { path: 'a/b/c.md' });
  t.equal(fs.readFileSync(path.join(root, 'a/b/c.md'), 'utf8'), 'hello', 'untouched');
  t.equal((await refusal(v.create('a/b', B('x')))).code, 'already_exists', 'a folder is in the way');
  t.equal((await refusal(v.create('a/b/c.md/d.md', B('x')))).code, 'not_a_directory');
  t.equal((await refusal(v.create('../x.md', B('x')))).code, 'invalid_path');
  await v.create('empty.md', new Uint8Array(0));
  t.equal((await v.readBytes('empty.md')).length, 0);
  t.same(fs.readdirSync(path.join(root, 'a/b')), ['c.md'], 'no staging names left');
  await v.close();
});

t.test('reads: stat, exists, readBytes cap, strict readText', async (t) => {
  const { v, root } = await fresh();
  await v.create('n.md', B('\ufeffhé'));
  const st = await v.stat('n.md');
  t.match(st, { path: 'n.md', kind: 'file', size: 6, nlink: 1 });
  t.type(st.ino, 'number');
  t.equal((await v.stat('n.md')).kind, 'file');
  t.ok(await v.exists('n.md'));
  t.notOk(await v.exists('missing.md'));
  t.equal(await v.readText('n.md'), '\ufeffhé', 'BOM kept');
  const tl = await refusal(v.readBytes('n.md', { maxBytes: 5 }));
  t.same([tl.code, tl.details], ['too_large', { path: 'n.md', size: 6, limit: 5 }]);
  t.equal((await v.readBytes('n.md', { maxBytes: 6 })).length, 6);
  fs.writeFileSync(path.join(root, 'bad.md'), Buffer.from([0x61, 0x62, 0x63, 0xff, 0x64]));
  const bad = await refusal(v.readText('bad.md'));
  t.same([bad.code, bad.details], ['not_utf8', { path: 'bad.md', offset: 3 }]);
  t.equal((await refusal(v.readText('missing.md'))).code, 'not_found');
  t.equal((await refusal(v.stat('nope/missing.md'))).code, 'not_found');
  fs.mkdirSync(path.join(root, 'dir'));
  t.equal((await refusal(v.readBytes('dir'))).code, 'is_directory');
  t.equal((await v.stat('dir')).kind, 'directory');
  t.equal((await refusal(v.readText('n.md/x'))).code, 'not_found');
  await v.close();
});

t.test('replace: preconditions, concurrent detection, previousHash', async (t) => {
  const { v, root } = await fresh();
  const a = await v.create('r.md', B('one'));
  const mal = await refusal(v.replace('r.md', B('x'), { expectedHash: 'sha256:ABC' }));
  t.same([mal.code, mal.details], ['malformed_precondition', { expectedHash: 'sha256:ABC' }]);
  const noInc = await refusal(v.replace('none.md', B('x'), { expectedHash: a.contentHash }));
  t.same([noInc.code, noInc.details], ['no_incumbent', { path: 'none.md' }]);
  t.equal((await refusal(v.replace('none/deeper.md', B('x'), { expectedHash: a.contentHash }))).code, 'no_incumbent');
  t.equal((await refusal(v.replace('none.md', B('x')))).code, 'not_found');
  const r = await v.replace('r.md', B('two'), { expectedHash: a.contentHash });
  t.same(r, { path: 'r.md', contentHash: v.contentHash(B('two')), size: 3, previousHash: a.contentHash });
  const stale = await refusal(v.replace('r.md', B('three'), { expectedHash: a.contentHash }));
  t.same(
    [stale.code, stale.details],
    [
      'stale_precondition',
      {
        path: 'r.md',
        expectedHash: a.contentHash,
        currentHash: r.contentHash,
        current_hash: r.contentHash,
        nothing_written: true,
      },
    ],
  );
  t.equal(fs.readFileSync(path.join(root, 'r.md'), 'utf8'), 'two');
  const plain = await v.replace('r.md', B('four'));
  t.equal(plain.previousHash, r.contentHash, 'without expectedHash it still reports what it replaced');
  fs.mkdirSync(path.join(root, 'd'));
  t.equal((await refusal(v.replace('d', B('x')))).code, 'is_directory');
  t.same(fs.readdirSync(root).sort(), ['d', 'r.md'], 'no staging names left');
  await v.close();
});

t.test('replace detects a write that lands while it stages', async (t) => {
  const { v, root } = await fresh();
  const a = await v.create('c.md', B('base'));
  // An outside editor rewrites the file in place after the first comparison, while the stage is written.
  writeHooks.beforePublish = () => fs.writeFileSync(path.join(root, 'c.md'), 'editor wins');
  t.teardown(() => {
    delete writeHooks.beforePublish;
  });
  const e = await refusal(v.replace('c.md', B('mine'), { expectedHash: a.contentHash }));
  t.equal(e.code, 'concurrent_write');
  t.equal(e.details.currentHash, v.contentHash(B('editor wins')));
  t.equal(fs.readFileSync(path.join(root, 'c.md'), 'utf8'), 'editor wins', 'the concurrent write survives');
  // ... or renames a new file over it (same bytes as before, different inode): still detected.
  writeHooks.beforePublish = () => {
    fs.writeFileSync(path.join(root, 'tmp'), 'editor wins');
    fs.renameSync(path.join(root, 'tmp'), path.join(root, 'c.md'));
  };
  const e2 = await refusal(v.replace('c.md', B('mine'), { expectedHash: v.contentHash(B('editor wins')) }));
  t.equal(e2.code, 'concurrent_write');
  delete writeHooks.beforePublish;
  t.same(fs.readdirSync(root), ['c.md'], 'nothing staged is left');
  await v.close();
});

t.test('move: no-replace, parents created, refusals', async (t) => {
  const { v, root } = await fresh();
  await v.create('m/a.md', B('a'));
  await v.create('m/b.md', B('b'));
  await v.move('m/a.md', 'x/y/a.md');
  t.equal(fs.readFileSync(path.join(root, 'x/y/a.md'), 'utf8'), 'a');
  t.notOk(fs.existsSync(path.join(root, 'm/a.md')));
  const e = await refusal(v.move('m/b.md', 'x/y/a.md'));
  t.same([e.code, e.details], ['already_exists', { path: 'x/y/a.md' }]);
  t.equal(fs.readFileSync(path.join(root, 'x/y/a.md'), 'utf8'), 'a');
  t.equal((await refusal(v.move('m/nope.md', 'z.md'))).code, 'not_found');
  t.equal((await refusal(v.move('m', 'm/inner'))).code, 'invalid_path', 'a folder into itself');
  await v.move('m', 'm2');
  t.ok(fs.existsSync(path.join(root, 'm2/b.md')), 'folders move too');
  await v.close();
});

t.test('trash: one non-replacing rename, distinct names in the same second', async (t) => {
  const { v, root } = await fresh();
  await v.create('t/n.md', B('1'));
  const r1 = await v.trash('t/n.md');
  await v.create('t/n.md', B('2'));
  const r2 = await v.trash('t/n.md');
  t.match(r1.trashPath, /^\.trash\/\d{8}-\d{6}-n\.md-[0-9a-f]{8}$/);
  t.not(r1.trashPath, r2.trashPath);
  t.equal(fs.readFileSync(path.join(root, r1.trashPath), 'utf8'), '1');
  t.equal(fs.readFileSync(path.join(root, r2.trashPath), 'utf8'), '2');
  t.notOk(await v.exists('t/n.md'));
  t.equal((await refusal(v.trash('t/n.md'))).code, 'not_found');
  t.equal((await refusal(v.readText(r1.trashPath))).code, 'invalid_path', '.trash is out of reach of tools');
  const long = 'L'.repeat(250) + '.md';
  await v.create(long, B('long'));
  const r3 = await v.trash(long);
  t.ok(Buffer.byteLength(r3.trashPath.slice(7)) <= 255, 'long names are shortened to fit');
  await v.close();
});

t.test('unlink and mkdirp', async (t) => {
  const { v, root } = await fresh();
  await v.mkdirp('p/q/r');
  await v.mkdirp('p/q/r');
  t.ok(fs.statSync(path.join(root, 'p/q/r')).isDirectory());
  await v.create('p/f.md', B('f'));
  t.equal((await refusal(v.mkdirp('p/f.md/x'))).code, 'not_a_directory');
  await v.unlink('p/f.md');
  t.notOk(fs.existsSync(path.join(root, 'p/f.md')));
  t.equal((await refusal(v.unlink('p/f.md'))).code, 'not_found');
  t.equal((await refusal(v.unlink('p/q'))).code, 'is_directory');
  await v.close();
});

t.test('symlinks: writes refuse naming the target, reads follow only inside', async (t) => {
  const { v, root } = await fresh();
  const outside = path.join(path.dirname(root), 'outside');
  fs.mkdirSync(outside);
  fs.writeFileSync(path.join(outside, 's.txt'), 'SECRET');
  await v.create('real/in.md', B('inside'));
  fs.symlinkSync('real/in.md', path.join(root, 'link.md'));
  fs.symlinkSync('real', path.join(root, 'dirlink'));
  fs.symlinkSync('../outside/s.txt', path.join(root, 'out.md'));
  fs.symlinkSync(outside, path.join(root, 'outdir'));
  fs.mkdirSync(path.join(root, '.obsidian'));
  fs.writeFileSync(path.join(root, '.obsidian', 'app.json'), '{}');
  fs.symlinkSync('.obsidian/app.json', path.join(root, 'dot.md'));
  t.equal(await v.readText('link.md'), 'inside');
  t.equal(await v.readText('dirlink/in.md'), 'inside');
  for (const p of ['out.md', 'outdir/s.txt', 'dot.md']) {
    const e = await refusal(v.readText(p));
    t.equal(e.code, 'is_symlink', `read ${p}`);
  }
  t.same((await refusal(v.readText('out.md'))).details, { path: 'out.md', target: '../outside/s.txt' });
  for (const [label, op] of [
    ['create over link', () => v.create('link.md', B('x'))],
    ['replace link', () => v.replace('link.md', B('x'))],
    ['create through dir link', () => v.create('dirlink/new.md', B('x'))],
    ['create through outside dir link', () => v.create('outdir/new.md', B('x'))],
    ['move link', () => v.move('link.md', 'moved.md')],
    ['move onto link', () => v.move('real/in.md', 'link.md')],
    ['trash link', () => v.trash('link.md')],
    ['unlink link', () => v.unlink('link.md')],
    ['mkdirp through link', () => v.mkdirp('outdir/x')],
  ] as const) {
    const e = await refusal(op());
    t.equal(e.code, 'is_symlink', label);
    t.type(e.details.target, 'string');
  }
  t.same((await refusal(v.replace('link.md', B('x')))).details, { path: 'link.md', target: 'real/in.md' });
  t.equal(fs.readFileSync(path.join(root, 'real/in.md'), 'utf8'), 'inside');
  t.same(fs.readdirSync(outside), ['s.txt']);
  const st = await v.stat('out.md');
  t.match(st, { kind: 'symlink', linkTarget: '../outside/s.txt', linkInside: false });
  t.match(await v.stat('link.md'), { kind: 'symlink', linkTarget: 'real/in.md', linkInside: true });
  t.match(await v.stat('dirlink/in.md'), { kind: 'file', path: 'dirlink/in.md' });
  await v.close();
});

t.test('list and walk skip dot-entries and never follow symlinks', async (t) => {
  const { v, root } = await fresh();
  await v.create('b/2.md', B('2'));
  await v.create('b/c/3.md', B('3'));
  await v.create('a.md', B('1'));
  await v.create('img.png', B('p'));
  fs.mkdirSync(path.join(root, '.obsidian'));
  fs.writeFileSync(path.join(root, '.obsidian', 'x.md'), 'hidden');
  fs.writeFileSync(path.join(root, 'b', '.hidden.md'), 'hidden');
  fs.symlinkSync('/etc', path.join(root, 'etc'));
  fs.writeFileSync(
    Buffer.concat([Buffer.from(root + '/'), Buffer.from([0x62, 0x61, 0x64, 0xff, 0x2e, 0x6d, 0x64])]),
    'x',
  );
  const top = await v.list('');
  t.same(
    top.map((e) => [e.path, e.kind]),
    [
      ['a.md', 'file'],
      ['b', 'directory'],
      ['etc', 'symlink'],
      ['img.png', 'file'],
    ],
    'names that are not UTF-8 are unreachable and left out',
  );
  const rec = await v.list('', { recursive: true, pattern: '**/*.md' });
  t.same(
    rec.map((e) => e.path),
    ['a.md', 'b/2.md', 'b/c/3.md'],
  );
  t.same(
    (await v.list('b', { recursive: true })).map((e) => e.path),
    ['b/2.md', 'b/c', 'b/c/3.md'],
  );
  t.same((await v.list('', { recursive: true, limit: 2 })).length, 2);
  t.equal((await refusal(v.list('a.md'))).code, 'not_a_directory');
  t.equal((await refusal(v.list('nope'))).code, 'not_found');
  t.equal((await refusal(v.list('etc'))).code, 'is_symlink');
  const walked: string[] = [];
  for await (const e of v.walk()) walked.push(`${e.path}:${e.kind}`);
  t.same(walked, [
    'a.md:file',
    'b:directory',
    'b/2.md:file',
    'b/c:directory',
    'b/c/3.md:file',
    'etc:symlink',
    'img.png:file',
  ]);
  await v.close();
});

t.test('NFC and NFD twins made outside the server are distinct files, each read as named', async (t) => {
  const { v, root } = await fresh();
  fs.writeFileSync(path.join(root, 'caf\u00e9.md'), 'nfc');
  fs.writeFileSync(path.join(root, 'cafe\u0301.md'), 'nfd');
  t.equal(await v.readText('caf\u00e9.md'), 'nfc');
  t.equal(await v.readText('cafe\u0301.md'), 'nfd');
  t.equal(fs.readdirSync(root).length, 2);
  await v.close();
});

t.test('readAppConfig reads only Obsidian settings files, never through symlinks', async (t) => {
  const { mkdtempSync, mkdirSync, writeFileSync, symlinkSync, rmSync } = await import('node:fs');
  const os = await import('node:os');
  const pathMod = await import('node:path');
  const { openVault } = await import('../../../src/host/vault/index.js');
  const root = mkdtempSync(pathMod.join(os.tmpdir(), 'exo-appcfg-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(pathMod.join(root, '.obsidian/plugins/periodic-notes'), { recursive: true });
  writeFileSync(pathMod.join(root, '.obsidian/daily-notes.json'), '{"folder":"J"}');
  writeFileSync(pathMod.join(root, '.obsidian/plugins/periodic-notes/data.json'), '{"daily":{}}');
  writeFileSync(pathMod.join(root, 'outside.json'), '{"secret":1}');
  symlinkSync('../outside.json', pathMod.join(root, '.obsidian/app.json'));
  const v = await openVault(root);
  t.teardown(() => v.close());
  t.equal(await v.readAppConfig('daily-notes.json'), '{"folder":"J"}');
  t.equal(await v.readAppConfig('plugins/periodic-notes/data.json'), '{"daily":{}}');
  t.equal(await v.readAppConfig('core-plugins.json'), undefined, 'absent → undefined');
  await t.rejects(v.readAppConfig('app.json'), { code: 'is_symlink' });
  for (const bad of [
    '../x.json',
    'plugins/../../x.json',
    'workspace',
    'plugins/a/b/data.json',
    '/etc/passwd',
    'plugins/x/main.js',
  ]) {
    await t.rejects(v.readAppConfig(bad), { code: 'invalid_path' }, bad);
  }
  await t.rejects(
    v.readText('.obsidian/daily-notes.json'),
    { code: 'invalid_path' },
    'the ordinary guard still refuses dot paths',
  );
});

t.test(
  'a name that differs from an existing one only in Unicode normalisation is never created or moved onto',
  async (t) => {
    const { v, root } = await fresh();
    const nfc = 'Caf\u00e9.md';
    const nfd = 'Cafe\u0301.md';
    await v.create(`notes/${nfc}`, B('first'));
    const e = await refusal(v.create(`notes/${nfd}`, B('twin')));
    t.equal(e.code, 'name_twin');
    t.same(e.details, { path: `notes/${nfd}`, existing: `notes/${nfc}` });
    t.same(fs.readdirSync(path.join(root, 'notes')), [nfc], 'no twin on disk');
    await v.create('notes/other.md', B('o'));
    t.equal((await refusal(v.move('notes/other.md', `notes/${nfd}`))).code, 'name_twin', 'nor by a move');
    await v.move(`notes/${nfc}`, `notes/${nfd}`);
    t.same(
      fs.readdirSync(path.join(root, 'notes')).sort(),
      [nfd, 'other.md'].sort(),
      'renaming a file to its own other spelling is allowed',
    );
    await v.create('notes/plain.md', B('ascii names are unaffected'));
  },
);
