// Write side of the vault: no-clobber create (O_TMPFILE stage + fsync + linkat), checked replace (hash
// compare, stage, re-compare under lock, swap in with RENAME_EXCHANGE, verify what was swapped out, swap
// back when an outside writer got there first), non-replacing move and trash, unlink, mkdirp. Every
// published change is followed by an fsync of the folder(s) it touched. Nothing here ever discards bytes
// it has not compared: an outside version is either the checked one or is put back (or kept aside).

import { randomBytes } from 'node:crypto';
import { Refusal } from '../../sdk/refusals.js';
import type { ReplaceOptions, TrashResult, WriteResult } from '../../sdk/vault.js';
import { type VaultCore, STAGE_PREFIX, type DirHandle } from './core.js';
import { closeFd, fstatFd, fsyncFd, readAll, writeAll } from './fd-io.js';
import { errCode, type ExchangeOutcome, type NativeStat } from './native.js';
import { HASH_RE, MAX_NAME_BYTES, checkNewPath, checkVaultPath, contentHash, splitPath } from './path-guard.js';

interface Staged {
  readonly fd: number;
  /** Named staging only: the dot-name the bytes were written under. */
  readonly name?: string;
}

/**
 * Test seams that let tests land an outside write: `beforePublish` runs after staging, before the lock and
 * re-compare; `beforeSwap` runs under the lock after the re-compare, in the instant an outside editor can
 * still slip into before the new bytes are published.
 */
export const writeHooks: {
  beforePublish?: (path: string) => Promise<void> | void;
  beforeSwap?: (path: string) => Promise<void> | void;
} = {};

function stageName(): string {
  return STAGE_PREFIX + randomBytes(8).toString('hex');
}

/**
 * An errno meaning the folder we hold open was removed or swapped out from under us (for a symlink, say):
 * creating in a deleted folder gives ENOENT, or EPERM for O_TMPFILE. A typed refusal, not a bug.
 */
export function folderRaced(e: unknown, p: string): unknown {
  const code = errCode(e);
  if (
    code === 'ENOENT' ||
    code === 'ENOTDIR' ||
    code === 'ESTALE' ||
    (code === 'EPERM' && (e as { syscall?: string }).syscall === 'openat2')
  ) {
    return new Refusal(
      'concurrent_write',
      { path: p, currentHash: null },
      `The folder of "${p}" was removed or replaced while this write was in progress; nothing was written.`,
    );
  }
  return e;
}

/** Write `bytes` into an unnamed inode (or a named dot-file when O_TMPFILE is waived) and fsync it. */
async function stage(core: VaultCore, dir: DirHandle, bytes: Uint8Array): Promise<Staged> {
  const c = core.c;
  let staged: Staged;
  if (core.capabilities.namedStaging) {
    const name = stageName();
    core.inFlight.add(name);
    staged = {
      fd: await core.n.openat2(dir.fd, name, c.O_RDWR | c.O_CREAT | c.O_EXCL | c.O_NOFOLLOW, 0o644, core.res),
      name,
    };
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

/**
 * Refuse a new name whose NFC or NFD spelling already names another entry of the folder: Linux keeps both
 * (twins), while Obsidian on macOS and sync clients treat them as one file. `except` is a move's source.
 */
async function refuseTwin(
  core: VaultCore,
  d: DirHandle,
  dir: string,
  name: string,
  p: string,
  except?: string,
): Promise<void> {
  for (const form of ['NFC', 'NFD'] as const) {
    const other = name.normalize(form);
    if (other === name || other === except) continue;
    if (await peek(core, d, other))
      throw new Refusal('name_twin', { path: p, existing: dir ? `${dir}/${other}` : other });
  }
}

function linkText(st: NativeStat): string {
  return st.link?.toString('utf8') ?? '?';
}

export async function create(core: VaultCore, p: string, bytes: Uint8Array): Promise<WriteResult> {
  checkNewPath(p);
  core.assertOpen();
  const { dir, name } = splitPath(p);
  const d = await core.openWriteDir(dir, true, p);
  try {
    await refuseTwin(core, d, dir, name, p);
    const staged = await stage(core, d, bytes).catch((e: unknown) => {
      throw folderRaced(e, p);
    });
    try {
      await core.n.linkat(staged.name ? d.fd : staged.fd, staged.name ?? '', d.fd, name);
    } catch (e) {
      if (errCode(e) !== 'EEXIST') throw folderRaced(e, p);
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
async function openIncumbent(
  core: VaultCore,
  d: DirHandle,
  name: string,
  p: string,
  expected?: string,
): Promise<number> {
  let fd: number;
  try {
    fd = await core.n.openat2(d.fd, name, core.readFlags, 0, core.res);
  } catch (e) {
    const code = errCode(e);
    if (code === 'ENOENT')
      throw expected !== undefined ? new Refusal('no_incumbent', { path: p }) : new Refusal('not_found', { path: p });
    if (code === 'ELOOP') {
      const st = await peek(core, d, name);
      throw new Refusal('is_symlink', { path: p, target: st ? linkText(st) : '?' });
    }
    throw e;
  }
  const st = await fstatFd(fd);
  if (!st.isFile()) {
    await closeFd(fd);
    throw st.isDirectory()
      ? new Refusal('is_directory', { path: p })
      : new Refusal('invalid_path', { path: p, reason: 'not a regular file' });
  }
  if (st.nlink > 1 && !core.policy.allowHardLinks) {
    await closeFd(fd);
    throw new Refusal('hard_link', { path: p, links: st.nlink });
  }
  return fd;
}

/**
 * Wait (up to vault.openWriterWaitMs) until no other program holds `fd`'s inode open for writing. True when
 * none does, false when one still does, undefined where the kernel cannot tell (no lease support, or the
 * file belongs to another user): then only the byte compare protects the write.
 */
async function noOpenWriter(core: VaultCore, fd: number, waitMs: number): Promise<boolean | undefined> {
  const deadline = Date.now() + waitMs;
  for (let pause = 1; ; pause = Math.min(pause * 2, 16)) {
    let free: boolean;
    try {
      free = await core.n.leaseProbe(fd);
    } catch {
      return undefined;
    }
    if (free || Date.now() >= deadline) return free;
    await new Promise((r) => setTimeout(r, pause));
  }
}

/** Rename `from` to a fresh hidden name beside it, never replacing anything; returns that name. */
async function keepAside(core: VaultCore, d: DirHandle, from: string): Promise<string> {
  for (;;) {
    const aside = `${CONFLICT_PREFIX}${randomBytes(8).toString('hex')}`;
    try {
      await core.n.renameat2(d.fd, from, d.fd, aside, core.c.RENAME_NOREPLACE);
      return aside;
    } catch (e) {
      if (errCode(e) !== 'EEXIST') throw e;
    }
  }
}

async function hashOf(fd: number): Promise<{ hash: string; ino: number }> {
  const st = await fstatFd(fd);
  return { hash: contentHash(await readAll(fd, st.size)), ino: st.ino };
}

const CONFLICT_PREFIX = '.exo-conflict-';

/**
 * After a swap that was undone: remove our staged bytes, or, where outside writes raced the undo itself,
 * keep every outside version (the newest at the note's name, the one it displaced aside), never delete one.
 */
async function settleRefused(
  core: VaultCore,
  d: DirHandle,
  name: string,
  pubName: string,
  o: ExchangeOutcome,
  p: string,
): Promise<void> {
  const where = (n: string) => (d.rel ? `${d.rel}/${n}` : n);
  if (o.status === 'restored') {
    await core.n.unlinkat(d.fd, pubName, 0);
    return;
  }
  if (o.status === 'gone') {
    // The note (our bytes) was removed before the undo: put the outside version back, never over anything.
    try {
      await core.n.renameat2(d.fd, pubName, d.fd, name, core.c.RENAME_NOREPLACE);
      return;
    } catch (e) {
      if (errCode(e) !== 'EEXIST') throw e;
    }
  } else {
    // 'kept': an outside rename replaced our bytes between the swap and the undo, so the undo brought that
    // newer version out. Swap it back in (it is the latest outside intent); the one it displaced goes aside.
    await core.n.renameat2(d.fd, pubName, d.fd, name, core.c.RENAME_EXCHANGE);
  }
  const aside = await keepAside(core, d, pubName);
  core.log?.warn(
    { path: p, keptAs: where(aside), reason: o.reason },
    'outside writes raced a replace and its undo; the displaced outside version was kept aside',
  );
}

export async function replace(
  core: VaultCore,
  p: string,
  bytes: Uint8Array,
  o: ReplaceOptions = {},
): Promise<WriteResult> {
  checkVaultPath(p);
  const expected = o.expectedHash;
  if (expected !== undefined && (typeof expected !== 'string' || !HASH_RE.test(expected))) {
    throw new Refusal('malformed_precondition', { expectedHash: expected });
  }
  core.assertOpen();
  const { dir, name } = splitPath(p);
  const d = await core.openWriteDir(dir, false, p).catch((e: unknown) => {
    if (expected !== undefined && e instanceof Refusal && e.code === 'not_found')
      throw new Refusal('no_incumbent', { path: p });
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
    const staged = await stage(core, d, bytes).catch((e: unknown) => {
      throw folderRaced(e, p);
    });
    if (writeHooks.beforePublish) await writeHooks.beforePublish(p);
    const pubName = staged.name ?? stageName();
    core.inFlight.add(pubName);
    let locked = false;
    // True while pubName names an outside version (between the swap and its verification or undo).
    let holdsOutside = false;
    try {
      // One flock waiter per folder per process: a blocked flock holds a libuv thread.
      unlock = await core.mutex.lock(`dir:${dir}`);
      await core.n.flock(d.fd, core.c.LOCK_EX);
      locked = true;
      // Re-compare just before publishing: another writer (another process, or an editor) may have won.
      const again = await openIncumbent(core, d, name, p).catch((e: unknown) => {
        if (e instanceof Refusal && e.code === 'not_found')
          throw new Refusal('concurrent_write', { path: p, currentHash: null });
        throw e;
      });
      let now: { hash: string; ino: number; bytes: Buffer };
      let writerOpen: boolean;
      try {
        // An editor writing in place (or an appender) may hold the note open: let it finish first.
        writerOpen = (await noOpenWriter(core, again, core.policy.openWriterWaitMs)) === false;
        const st = await fstatFd(again);
        const bytesNow = await readAll(again, st.size);
        now = { hash: contentHash(bytesNow), ino: st.ino, bytes: bytesNow };
      } finally {
        await closeFd(again);
      }
      if (writerOpen) throw new Refusal('concurrent_write', { path: p, currentHash: now.hash });
      if (now.hash !== before.hash || now.ino !== before.ino)
        throw new Refusal('concurrent_write', { path: p, currentHash: now.hash });
      if (!staged.name)
        await core.n.linkat(staged.fd, '', d.fd, pubName).catch((e: unknown) => {
          throw folderRaced(e, p);
        });
      const ours = (await fstatFd(staged.fd)).ino;
      if (writeHooks.beforeSwap) await writeHooks.beforeSwap(p);
      // Swap rather than rename over: an outside rename or append that lands after the compare above is
      // then in the inode swapped out, where it is seen and put back instead of silently replaced.
      let outcome: ExchangeOutcome;
      try {
        outcome = await core.n.exchangeChecked(d.fd, pubName, name, now.ino, now.bytes, ours);
      } catch (e) {
        if (errCode(e) === 'ENOENT' && (await peek(core, d, pubName))?.ino === ours) {
          await core.n.unlinkat(d.fd, pubName, 0).catch(() => undefined);
          throw new Refusal('concurrent_write', { path: p, currentHash: null });
        }
        holdsOutside = (await peek(core, d, pubName))?.ino !== ours;
        throw e;
      }
      if (outcome.status !== 'ok') {
        holdsOutside = outcome.status !== 'restored';
        await settleRefused(core, d, name, pubName, outcome, p);
        holdsOutside = false;
        await fsyncFd(d.fd);
        throw new Refusal('concurrent_write', { path: p, currentHash: null });
      }
      holdsOutside = true;
      await core.n.unlinkat(d.fd, pubName, 0);
      holdsOutside = false;
    } finally {
      if (holdsOutside) {
        // Something failed mid-swap: never delete an outside version, keep it beside the note.
        const aside = await keepAside(core, d, pubName).catch(() => pubName);
        core.log?.warn(
          { path: p, keptAs: d.rel ? `${d.rel}/${aside}` : aside },
          'replace failed after swapping; the outside version was kept aside',
        );
        core.inFlight.delete(pubName);
        await closeFd(staged.fd);
      }
      if (locked) await core.n.flock(d.fd, core.c.LOCK_UN).catch(() => undefined);
      unlock?.();
      unlock = undefined;
      if (!holdsOutside) {
        core.inFlight.delete(pubName);
        await discard(core, d, staged);
      }
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
  checkNewPath(to);
  core.assertOpen();
  const a = splitPath(from);
  const b = splitPath(to);
  const fd = await core.openWriteDir(a.dir, false, from);
  try {
    await subject(core, fd, a.name, from);
    const td = await core.openWriteDir(b.dir, true, to);
    try {
      await refuseTwin(core, td, b.dir, b.name, to, a.dir === b.dir ? a.name : undefined);
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
  checkNewPath(p);
  core.assertOpen();
  const d = await core.openWriteDir(p, true, p);
  await d.close();
}
