// Write side of the vault: no-clobber create (O_TMPFILE stage + fsync + linkat), checked replace (hash
// compare, stage, re-compare under lock, rename over), non-replacing move and trash, unlink, mkdirp.
// Every published change is followed by an fsync of the folder(s) it touched.

import { randomBytes } from 'node:crypto';
import { Refusal } from '../../sdk/refusals.js';
import type { ReplaceOptions, TrashResult, WriteResult } from '../../sdk/vault.js';
import { VaultCore, STAGE_PREFIX, type DirHandle } from './core.js';
import { closeFd, fstatFd, fsyncFd, readAll, writeAll } from './fd-io.js';
import { errCode, type NativeStat } from './native.js';
import { HASH_RE, MAX_NAME_BYTES, checkVaultPath, contentHash, splitPath } from './path-guard.js';

interface Staged {
  readonly fd: number;
  /** Named staging only: the dot-name the bytes were written under. */
  readonly name?: string;
}

/** Test seam: runs after staging, just before the re-compare (lets tests land a concurrent write). */
export const writeHooks: { beforePublish?: (path: string) => Promise<void> | void } = {};

function stageName(): string {
  return STAGE_PREFIX + randomBytes(8).toString('hex');
}

/** Write `bytes` into an unnamed inode (or a named dot-file when O_TMPFILE is waived) and fsync it. */
async function stage(core: VaultCore, dir: DirHandle, bytes: Uint8Array): Promise<Staged> {
  const c = core.c;
  let staged: Staged;
  if (core.capabilities.namedStaging) {
    const name = stageName();
    core.inFlight.add(name);
    staged = { fd: await core.n.openat2(dir.fd, name, c.O_RDWR | c.O_CREAT | c.O_EXCL | c.O_NOFOLLOW, 0o644, core.res), name };
  } else {
    staged = { fd: await core.n.openat2(dir.fd, '.', c.O_TMPFILE | c.O_RDWR, 0o644, core.res) };
  }
  try {
    await writeAll(staged.fd, bytes);
    await fsyncFd(staged.fd);
  } catch (e) {
    await discard(core, dir, staged);
    throw e;
  }
  return staged;
}

async function discard(core: VaultCore, dir: DirHandle, s: Staged): Promise<void> {
  await closeFd(s.fd);
  if (s.name) {
    await core.n.unlinkat(dir.fd, s.name, 0).catch(() => undefined);
    core.inFlight.delete(s.name);
  }
}

/** Inspect one name in an already-opened folder, never following it; undefined when absent. */
async function peek(core: VaultCore, dir: DirHandle, name: string): Promise<NativeStat | undefined> {
  try {
    return await core.n.inspect(dir.fd, name, core.res);
  } catch (e) {
    if (errCode(e) === 'ENOENT') return undefined;
    throw e;
  }
}

function linkText(st: NativeStat): string {
  return st.link?.toString('utf8') ?? '?';
}

export async function create(core: VaultCore, p: string, bytes: Uint8Array): Promise<WriteResult> {
  checkVaultPath(p);
  core.assertOpen();
  const { dir, name } = splitPath(p);
  const d = await core.openWriteDir(dir, true, p);
  try {
    const staged = await stage(core, d, bytes);
    try {
      await core.n.linkat(staged.name ? d.fd : staged.fd, staged.name ?? '', d.fd, name);
    } catch (e) {
      if (errCode(e) !== 'EEXIST') throw e;
      const st = await peek(core, d, name);
      if (st?.kind === 'symlink') throw new Refusal('is_symlink', { path: p, target: linkText(st) });
      throw new Refusal('already_exists', { path: p });
    } finally {
      await discard(core, d, staged);
    }
    await fsyncFd(d.fd);
    return { path: p, contentHash: contentHash(bytes), size: bytes.byteLength };
  } finally {
    await d.close();
  }
}

/** Open the incumbent at `name` without following a symlink; refuses is_symlink / is_directory. */
async function openIncumbent(core: VaultCore, d: DirHandle, name: string, p: string, expected?: string): Promise<number> {
  let fd: number;
  try {
    fd = await core.n.openat2(d.fd, name, core.readFlags, 0, core.res);
  } catch (e) {
    const code = errCode(e);
    if (code === 'ENOENT') throw expected !== undefined ? new Refusal('no_incumbent', { path: p }) : new Refusal('not_found', { path: p });
    if (code === 'ELOOP') {
      const st = await peek(core, d, name);
      throw new Refusal('is_symlink', { path: p, target: st ? linkText(st) : '?' });
    }
    throw e;
  }
  const st = await fstatFd(fd);
  if (!st.isFile()) {
    await closeFd(fd);
    throw st.isDirectory() ? new Refusal('is_directory', { path: p }) : new Refusal('invalid_path', { path: p, reason: 'not a regular file' });
  }
  return fd;
}

async function hashOf(fd: number): Promise<{ hash: string; ino: number }> {
  const st = await fstatFd(fd);
  return { hash: contentHash(await readAll(fd, st.size)), ino: st.ino };
}

export async function replace(core: VaultCore, p: string, bytes: Uint8Array, o: ReplaceOptions = {}): Promise<WriteResult> {
  checkVaultPath(p);
  const expected = o.expectedHash;
  if (expected !== undefined && (typeof expected !== 'string' || !HASH_RE.test(expected))) {
    throw new Refusal('malformed_precondition', { expectedHash: expected });
  }
  core.assertOpen();
  const { dir, name } = splitPath(p);
  const d = await core.openWriteDir(dir, false, p).catch((e: unknown) => {
    if (expected !== undefined && e instanceof Refusal && e.code === 'not_found') throw new Refusal('no_incumbent', { path: p });
    throw e;
  });
  let unlock: (() => void) | undefined;
  try {
    // Compare and stage (write + fsync of the new inode) outside the folder lock, so writers to
    // different notes of one folder overlap; the compare is repeated under the lock before publishing.
    const inc = await openIncumbent(core, d, name, p, expected);
    let before: { hash: string; ino: number };
    try {
      before = await hashOf(inc);
    } finally {
      await closeFd(inc);
    }
    if (expected !== undefined && before.hash !== expected) {
      throw new Refusal('stale_precondition', { path: p, expectedHash: expected, currentHash: before.hash });
    }
    const staged = await stage(core, d, bytes);
    if (writeHooks.beforePublish) await writeHooks.beforePublish(p);
    const pubName = staged.name ?? stageName();
    core.inFlight.add(pubName);
    let locked = false;
    try {
      // One flock waiter per folder per process: a blocked flock holds a libuv thread.
      unlock = await core.mutex.lock(`dir:${dir}`);
      await core.n.flock(d.fd, core.c.LOCK_EX);
      locked = true;
      // Re-compare just before publishing: another writer (another process, or an editor) may have won.
      const again = await openIncumbent(core, d, name, p).catch((e: unknown) => {
        if (e instanceof Refusal && e.code === 'not_found') throw new Refusal('concurrent_write', { path: p, currentHash: null });
        throw e;
      });
      let now: { hash: string; ino: number };
      try {
        now = await hashOf(again);
      } finally {
        await closeFd(again);
      }
      if (now.hash !== before.hash || now.ino !== before.ino) throw new Refusal('concurrent_write', { path: p, currentHash: now.hash });
      if (!staged.name) await core.n.linkat(staged.fd, '', d.fd, pubName);
      try {
        await core.n.renameat2(d.fd, pubName, d.fd, name, 0);
      } catch (e) {
        await core.n.unlinkat(d.fd, pubName, 0).catch(() => undefined);
        throw e;
      }
    } finally {
      if (locked) await core.n.flock(d.fd, core.c.LOCK_UN).catch(() => undefined);
      unlock?.();
      unlock = undefined;
      core.inFlight.delete(pubName);
      await discard(core, d, staged);
    }
    await fsyncFd(d.fd);
    return { path: p, contentHash: contentHash(bytes), size: bytes.byteLength, previousHash: before.hash };
  } finally {
    unlock?.();
    await d.close();
  }
}

/** The entry being moved/trashed/unlinked: must exist and not be a symlink. */
async function subject(core: VaultCore, d: DirHandle, name: string, p: string): Promise<NativeStat> {
  const st = await peek(core, d, name);
  if (!st) throw new Refusal('not_found', { path: p });
  if (st.kind === 'symlink') throw new Refusal('is_symlink', { path: p, target: linkText(st) });
  return st;
}

function renameRefusal(e: unknown, from: string, to: string): unknown {
  switch (errCode(e)) {
    case 'EEXIST':
    case 'ENOTEMPTY':
      return new Refusal('already_exists', { path: to });
    case 'ENOENT':
      return new Refusal('not_found', { path: from });
    case 'EINVAL':
      return new Refusal('invalid_path', { path: to, reason: 'a folder cannot be moved into itself' });
    case 'ENOTDIR':
    case 'EISDIR':
      return new Refusal('invalid_path', { path: to, reason: 'a file and a folder cannot replace each other' });
    case 'EXDEV':
      return new Refusal('unsupported_filesystem', { reason: `"${from}" and "${to}" are on different mounts` });
    default:
      return e;
  }
}

export async function move(core: VaultCore, from: string, to: string): Promise<void> {
  checkVaultPath(from);
  checkVaultPath(to);
  core.assertOpen();
  const a = splitPath(from);
  const b = splitPath(to);
  const fd = await core.openWriteDir(a.dir, false, from);
  try {
    await subject(core, fd, a.name, from);
    const td = await core.openWriteDir(b.dir, true, to);
    try {
      try {
        await core.n.renameat2(fd.fd, a.name, td.fd, b.name, core.c.RENAME_NOREPLACE);
      } catch (e) {
        const st = errCode(e) === 'EEXIST' ? await peek(core, td, b.name) : undefined;
        if (st?.kind === 'symlink') throw new Refusal('is_symlink', { path: to, target: linkText(st) });
        throw renameRefusal(e, from, to);
      }
      await fsyncFd(td.fd);
      if (a.dir !== b.dir) await fsyncFd(fd.fd);
    } finally {
      await td.close();
    }
  } finally {
    await fd.close();
  }
}

function trashStamp(d = new Date()): string {
  const z = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}${z(d.getUTCMonth() + 1)}${z(d.getUTCDate())}-${z(d.getUTCHours())}${z(d.getUTCMinutes())}${z(d.getUTCSeconds())}`;
}

/** Shorten `base` (on a code-point boundary) so the trash name fits in one file name. */
function fitName(base: string, room: number): string {
  if (Buffer.byteLength(base) <= room) return base;
  let out = '';
  for (const ch of base) {
    if (Buffer.byteLength(out + ch) > room) break;
    out += ch;
  }
  return out;
}

async function openTrash(core: VaultCore): Promise<DirHandle> {
  try {
    await core.n.mkdirat(core.rootFd, '.trash', 0o755);
    await fsyncFd(core.rootFd);
  } catch (e) {
    if (errCode(e) !== 'EEXIST') throw e;
  }
  try {
    return await core.openDirAt(core.rootFd, '.trash', '.trash');
  } catch (e) {
    const code = errCode(e);
    if (code === 'ELOOP') throw await core.symlinkRefusal('.trash', '.trash');
    if (code === 'ENOTDIR') throw new Refusal('not_a_directory', { path: '.trash' });
    throw e;
  }
}

export async function trash(core: VaultCore, p: string): Promise<TrashResult> {
  checkVaultPath(p);
  core.assertOpen();
  const { dir, name } = splitPath(p);
  const d = await core.openWriteDir(dir, false, p);
  try {
    await subject(core, d, name, p);
    const t = await openTrash(core);
    try {
      for (let attempt = 0; ; attempt++) {
        const stamp = trashStamp();
        const trashName = `${stamp}-${fitName(name, MAX_NAME_BYTES - stamp.length - 10)}-${randomBytes(4).toString('hex')}`;
        try {
          await core.n.renameat2(d.fd, name, t.fd, trashName, core.c.RENAME_NOREPLACE);
        } catch (e) {
          if (errCode(e) === 'EEXIST' && attempt < 8) continue;
          throw renameRefusal(e, p, `.trash/${trashName}`);
        }
        await fsyncFd(t.fd);
        await fsyncFd(d.fd);
        return { path: p, trashPath: `.trash/${trashName}` };
      }
    } finally {
      await t.close();
    }
  } finally {
    await d.close();
  }
}

export async function unlink(core: VaultCore, p: string): Promise<void> {
  checkVaultPath(p);
  core.assertOpen();
  const { dir, name } = splitPath(p);
  const d = await core.openWriteDir(dir, false, p);
  try {
    const st = await subject(core, d, name, p);
    if (st.kind === 'directory') throw new Refusal('is_directory', { path: p });
    try {
      await core.n.unlinkat(d.fd, name, 0);
    } catch (e) {
      const code = errCode(e);
      if (code === 'ENOENT') throw new Refusal('not_found', { path: p });
      if (code === 'EISDIR') throw new Refusal('is_directory', { path: p });
      throw e;
    }
    await fsyncFd(d.fd);
  } finally {
    await d.close();
  }
}

export async function mkdirp(core: VaultCore, p: string): Promise<void> {
  checkVaultPath(p);
  core.assertOpen();
  const d = await core.openWriteDir(p, true, p);
  await d.close();
}
