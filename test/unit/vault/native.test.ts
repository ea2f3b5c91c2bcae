// The native façade: metadata calls made on the calling thread still settle Promises (never throw) with
// Node-style errors; flock waits on the pool only when the lock is held elsewhere; preadNowait reads
// cached bytes inline and readAll returns every byte whichever way each piece was read;
// EXOCORTEX_NATIVE_POOL=1 keeps every call on the pool.

import t from 'tap';
import { spawnSync } from 'node:child_process';
import fs, { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadNative } from '../../../src/host/vault/native.js';
import { readAll } from '../../../src/host/vault/fd-io.js';
import { typescriptArgs } from '../../../src/host/testing/cli.js';

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'exo-native-')));
t.teardown(() => fs.rmSync(tmp, { recursive: true, force: true }));
const n = loadNative()!;
const c = n.constants;

t.test('calls made inline return Promises and reject with Node-style errors', async (t) => {
  const dir = fs.openSync(tmp, 'r');
  t.teardown(() => fs.closeSync(dir));
  const pending = n.openat2(dir, 'missing.md', c.O_RDONLY, 0, c.RESOLVE_BENEATH);
  t.ok(pending instanceof Promise, 'a Promise even though the call already ran');
  const err = await pending.then(
    () => undefined,
    (e: unknown) => e as NodeJS.ErrnoException,
  );
  t.match(err, { code: 'ENOENT', errno: -2, syscall: 'openat2', path: 'missing.md' });
  t.match(err?.message, /^ENOENT: .*, openat2 'missing\.md'$/);
  await t.rejects(n.openat2(dir, '../escape', c.O_RDONLY, 0, c.RESOLVE_BENEATH), { code: 'EXDEV' });
  await t.rejects(n.renameat2(dir, 'missing.md', dir, 'other.md', c.RENAME_NOREPLACE), {
    code: 'ENOENT',
    syscall: 'renameat2',
  });
  fs.writeFileSync(path.join(tmp, 'a.md'), 'a');
  fs.writeFileSync(path.join(tmp, 'b.md'), 'b');
  await t.rejects(n.renameat2(dir, 'a.md', dir, 'b.md', c.RENAME_NOREPLACE), { code: 'EEXIST' });
  const st = await n.statx(dir, 'a.md', c.AT_SYMLINK_NOFOLLOW, c.STATX_BASIC_STATS);
  t.match(st, { kind: 'file', size: 1 });
  fs.symlinkSync('a.md', path.join(tmp, 'link.md'));
  const link = await n.inspect(dir, 'link.md', c.RESOLVE_BENEATH);
  t.equal(link.kind, 'symlink');
  t.equal(link.link?.toString(), 'a.md');
  t.equal((await n.readlinkat(dir, 'link.md')).toString(), 'a.md');
  await n.mkdirat(dir, 'sub', 0o755);
  await t.rejects(n.mkdirat(dir, 'sub', 0o755), { code: 'EEXIST', syscall: 'mkdirat' });
  await n.unlinkat(dir, 'sub', c.AT_REMOVEDIR);
  t.notOk(fs.existsSync(path.join(tmp, 'sub')));
  await t.rejects(
    (n.openat2 as unknown as (...a: unknown[]) => Promise<number>)('x', 1),
    new TypeError('bad argument types'),
    'a wrong argument type rejects too',
  );
});

t.test('flock waits on the pool only while another open file holds the lock', async (t) => {
  const mine = fs.openSync(tmp, 'r');
  const theirs = fs.openSync(tmp, 'r');
  t.teardown(() => {
    fs.closeSync(mine);
    fs.closeSync(theirs);
  });
  await n.flock(theirs, c.LOCK_EX);
  let got = false;
  const waiting = n.flock(mine, c.LOCK_EX).then(() => (got = true));
  await new Promise((r) => setTimeout(r, 50));
  t.notOk(got, 'the second lock waits while the first is held');
  await n.flock(theirs, c.LOCK_UN);
  await waiting;
  t.ok(got, 'and is granted once it is released');
  await n.flock(mine, c.LOCK_UN);
  await n.flock(theirs, c.LOCK_EX);
  await n.flock(theirs, c.LOCK_UN);
});

t.test('preadNowait reads cached bytes inline; readAll returns every byte', async (t) => {
  t.type(n.preadNowait, 'function');
  // On the checkout's disk: RWF_NOWAIT needs a filesystem that supports it (ext4, xfs, btrfs), and the
  // suite's temporary folder may be a tmpfs, which refuses it (the case below).
  const disk = fs.mkdtempSync(path.join(import.meta.dirname, '../../../.cache/exo-native-'));
  t.teardown(() => fs.rmSync(disk, { recursive: true, force: true }));
  const file = path.join(disk, 'big.md');
  const bytes = Buffer.alloc(300_000);
  for (let i = 0; i < bytes.length; i++) bytes[i] = 97 + (i % 26);
  fs.writeFileSync(file, bytes);
  const fd = fs.openSync(file, 'r');
  t.teardown(() => fs.closeSync(fd));
  const buf = Buffer.alloc(10);
  t.equal(n.preadNowait!(fd, buf, 0, 10, 5), 10, 'just written, so cached');
  t.equal(buf.toString(), 'fghijklmno');
  t.equal(n.preadNowait!(fd, buf, 0, 10, bytes.length), 0, 'the end of the file reads empty');
  t.throws(() => n.preadNowait!(fd, buf, 5, 10, 0), RangeError, 'a read past the buffer is refused');
  t.throws(() => n.preadNowait!(-1, buf, 0, 1, 0), { code: 'EBADF', syscall: 'preadv2' });
  t.same(await readAll(fd, bytes.length), bytes, 'exact size hint');
  t.same(await readAll(fd, 100), bytes, 'a hint far too small: the buffer grows');
  t.same(await readAll(fd, 0, 1000), bytes.subarray(0, 1001), 'limit caps the read at limit + 1 bytes');
});

t.test('on a tmpfs, which refuses RWF_NOWAIT, reads go through the pool and return every byte', async (t) => {
  const shm = '/dev/shm';
  if (!fs.existsSync(shm) || fs.statfsSync(shm).type !== 0x01021994) {
    t.plan(0, 'no tmpfs at /dev/shm here');
    return;
  }
  const dir = fs.mkdtempSync(path.join(shm, 'exo-native-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'note.md');
  const bytes = Buffer.from('x'.repeat(70_000));
  fs.writeFileSync(file, bytes);
  const fd = fs.openSync(file, 'r');
  t.teardown(() => fs.closeSync(fd));
  t.equal(n.preadNowait!(fd, Buffer.alloc(10), 0, 10, 0), -1, 'the inline read declines');
  t.same(await readAll(fd, bytes.length), bytes, 'readAll falls back to the pool');
});

t.test('EXOCORTEX_NATIVE_POOL=1 keeps every call on the pool, with the same results', async (t) => {
  const script = `
    import { loadNative } from ${JSON.stringify(new URL('../../../src/host/vault/native.ts', import.meta.url).href)};
    import fs from 'node:fs';
    const n = loadNative();
    const dir = fs.openSync(${JSON.stringify(tmp)}, 'r');
    const st = await n.statx(dir, 'a.md', n.constants.AT_SYMLINK_NOFOLLOW, n.constants.STATX_BASIC_STATS);
    const err = await n.openat2(dir, 'missing.md', 0, 0, n.constants.RESOLVE_BENEATH).catch((e) => e);
    console.log(JSON.stringify({ nowait: typeof n.preadNowait, kind: st.kind, code: err.code, syscall: err.syscall }));
  `;
  const r = spawnSync(process.execPath, [...typescriptArgs(), '--input-type=module', '-e', script], {
    env: { ...process.env, EXOCORTEX_NATIVE_POOL: '1' },
    encoding: 'utf8',
  });
  t.equal(r.status, 0, r.stderr);
  t.same(JSON.parse(r.stdout.trim()), { nowait: 'undefined', kind: 'file', code: 'ENOENT', syscall: 'openat2' });
});

t.test('trimMemory gives the pages a thread freed back to the system (glibc)', async (t) => {
  if (!n.trimMemory) return t.fail('the addon exports trimMemory');
  // A child fills its malloc arena with 32 KiB buffers, frees all but the last (which pins the heap's top, so
  // glibc cannot shrink it by itself) and reports its resident memory before and after the trim.
  const script = `
    const { loadNative } = await import(${JSON.stringify(new URL('../../../src/host/vault/native.ts', import.meta.url).href)});
    const { readFileSync } = await import('node:fs');
    const n = loadNative();
    const rss = () => Number(/VmRSS:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
    let kept = [];
    for (let i = 0; i < 4096; i++) kept.push(Buffer.allocUnsafeSlow(32 * 1024).fill(1));
    const last = kept.pop();
    kept = null;
    globalThis.gc(); globalThis.gc();
    const before = rss();
    const released = await n.trimMemory();
    console.log(JSON.stringify({ released, before, after: rss(), last: last.length }));
  `;
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as {
    released?: boolean;
    before: number;
    after: number;
  };
  if (!out.released && existsSync('/etc/alpine-release')) return t.pass('musl has no malloc_trim: nothing released');
  t.equal(out.released, true, `glibc released memory (${r.stderr.slice(-300)})`);
  t.ok(
    out.before - out.after > 48 * 1048576,
    `resident memory fell by ${((out.before - out.after) / 1048576).toFixed(0)} MiB`,
  );
});
