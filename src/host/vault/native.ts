// Loader and typed façade for the native addon (prebuilds/<platform>-<arch>/, or build/Release/): the syscalls Node
// lacks (openat2, O_TMPFILE publication, renameat2, statx mount ids, *at calls, flock), all Promise-based.
// Calls that only look up the kernel's cached dentries and inodes run on the calling thread (see
// `onCallingThread`); calls that change a folder, readdir and a flock that would wait use libuv's pool.

import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PACKAGE_ROOT } from '../package-info.js';

export type NativeKind = 'file' | 'directory' | 'symlink' | 'other';

export interface NativeStat {
  readonly kind: NativeKind;
  readonly mode: number;
  readonly mask: number;
  readonly size: number;
  readonly ino: number;
  readonly nlink: number;
  readonly mntId: number;
  readonly dev: string;
  readonly mtimeMs: number;
  readonly ctimeMs: number;
  /** Link text of a symlink (inspect and readdir only). */
  readonly link?: Buffer;
}

export interface ExchangeOutcome {
  readonly status: 'ok' | 'restored' | 'kept' | 'gone';
  readonly reason?: 'replaced' | 'changed' | 'open_writer';
  /** False where the kernel could not say whether an outside writer held the note open. */
  readonly leases: boolean;
}

export interface NativeDirEntry extends NativeStat {
  readonly name: Buffer;
}

export interface NativeConstants {
  readonly O_RDONLY: number;
  readonly O_WRONLY: number;
  readonly O_RDWR: number;
  readonly O_CREAT: number;
  readonly O_EXCL: number;
  readonly O_DIRECTORY: number;
  readonly O_NOFOLLOW: number;
  readonly O_PATH: number;
  readonly O_TMPFILE: number;
  readonly O_CLOEXEC: number;
  readonly RESOLVE_BENEATH: number;
  readonly RESOLVE_NO_SYMLINKS: number;
  readonly RESOLVE_NO_MAGICLINKS: number;
  readonly RESOLVE_NO_XDEV: number;
  readonly RENAME_NOREPLACE: number;
  readonly RENAME_EXCHANGE: number;
  readonly AT_EMPTY_PATH: number;
  readonly AT_SYMLINK_NOFOLLOW: number;
  readonly AT_REMOVEDIR: number;
  readonly STATX_BASIC_STATS: number;
  readonly STATX_MNT_ID: number;
  readonly STATX_MNT_ID_UNIQUE: number;
  readonly LOCK_EX: number;
  readonly LOCK_NB: number;
  readonly LOCK_UN: number;
}

export interface NativeAddon {
  openat2(dirfd: number, path: string, flags: number, mode: number, resolve: number): Promise<number>;
  /** oldPath '' publishes an O_TMPFILE fd (AT_EMPTY_PATH, else /proc/self/fd); EEXIST, never replaces. */
  linkat(fd: number, oldPath: string, newDirFd: number, newPath: string): Promise<'empty_path' | 'proc' | undefined>;
  /** flags 0 = plain renameat (replaces); RENAME_NOREPLACE gives EEXIST; RENAME_EXCHANGE swaps two names. */
  renameat2(oldDirFd: number, oldPath: string, newDirFd: number, newPath: string, flags: number): Promise<void>;
  statx(dirfd: number, path: string, flags: number, mask: number): Promise<NativeStat>;
  /** openat2(O_PATH|O_NOFOLLOW, resolve) + statx + readlink: what is at `path`, final symlink not followed. */
  inspect(dirfd: number, path: string, resolve: number): Promise<NativeStat>;
  mkdirat(dirfd: number, name: string, mode: number): Promise<void>;
  unlinkat(dirfd: number, name: string, flags: number): Promise<void>;
  readlinkat(dirfd: number, name: string): Promise<Buffer>;
  readdir(dirfd: number): Promise<NativeDirEntry[]>;
  flock(fd: number, op: number): Promise<void>;
  /**
   * True when nobody else has the inode of read-only `fd` open for writing (a read lease taken and dropped
   * at once); rejects (EACCES, EINVAL) where the kernel cannot tell. Writers in this process are not seen.
   */
  leaseProbe(fd: number): Promise<boolean>;
  /**
   * The checked replace's publish in one pool call: swap `tmp` and `name` (RENAME_EXCHANGE), verify that the
   * inode swapped out is `expectIno` with exactly `expected` bytes and no outside writer holding it open,
   * else swap back and say whether what came out is `oursIno` (see native/vault_native.cc).
   */
  exchangeChecked(
    dirfd: number,
    tmp: string,
    name: string,
    expectIno: number,
    expected: Buffer,
    oursIno: number,
  ): Promise<ExchangeOutcome>;
  /**
   * pread on the calling thread that never waits on a disk (preadv2 RWF_NOWAIT): bytes read (possibly fewer
   * than asked, before the end of the file), or -1 when the data is not cached and the pool must read it.
   * Absent when every call is kept on the pool.
   */
  readonly preadNowait?: (fd: number, buffer: Buffer, offset: number, length: number, position: number) => number;
  /**
   * glibc's malloc_trim(0) on the pool: true when free pages went back to the system (false with musl).
   * Absent in an addon built before it existed.
   */
  readonly trimMemory?: () => Promise<boolean>;
  readonly constants: NativeConstants;
}

/** What the addon exports: each call X async on the pool, and XSync making the same calls inline. */
interface RawAddon extends NativeAddon {
  openat2Sync(dirfd: number, path: string, flags: number, mode: number, resolve: number): number;
  linkatSync(fd: number, oldPath: string, newDirFd: number, newPath: string): 'empty_path' | 'proc' | undefined;
  renameat2Sync(oldDirFd: number, oldPath: string, newDirFd: number, newPath: string, flags: number): void;
  statxSync(dirfd: number, path: string, flags: number, mask: number): NativeStat;
  inspectSync(dirfd: number, path: string, resolve: number): NativeStat;
  mkdiratSync(dirfd: number, name: string, mode: number): void;
  unlinkatSync(dirfd: number, name: string, flags: number): void;
  readlinkatSync(dirfd: number, name: string): Buffer;
  flockSync(fd: number, op: number): void;
  leaseProbeSync(fd: number): boolean;
}

/**
 * The façade: path lookups, stat, readlink and a free flock on a local filesystem are served from the
 * kernel's caches in a few µs, while a thread-pool round trip costs ~30 µs of wall and CPU time and wakes a
 * pool thread that competes for the cores (bench/vault-io prints both). They run on the calling thread and
 * settle a Promise, so callers are the same either way. Calls that change the folder (O_TMPFILE or
 * O_CREAT opens, link, rename, unlink, mkdir) stay on the pool: they join the filesystem journal and can
 * wait behind another writer's fsync. readdir stays there too (its length is unbounded); flock is tried
 * without waiting first and only a lock held elsewhere waits on the pool; file data is read inline only
 * when it is in the page cache (`preadNowait`).
 */
function onCallingThread(raw: RawAddon): NativeAddon {
  const inline =
    <A extends unknown[], R>(fn: (...args: A) => R) =>
    (...args: A): Promise<R> => {
      try {
        return Promise.resolve(fn(...args));
      } catch (e) {
        return Promise.reject(e);
      }
    };
  const c = raw.constants;
  return {
    constants: c,
    openat2: (dirfd, p, flags, mode, resolve) =>
      flags & c.O_CREAT || (flags & c.O_TMPFILE) === c.O_TMPFILE
        ? raw.openat2(dirfd, p, flags, mode, resolve)
        : inline(raw.openat2Sync)(dirfd, p, flags, mode, resolve),
    linkat: raw.linkat,
    renameat2: raw.renameat2,
    statx: inline(raw.statxSync),
    inspect: inline(raw.inspectSync),
    mkdirat: raw.mkdirat,
    unlinkat: raw.unlinkat,
    readlinkat: inline(raw.readlinkatSync),
    readdir: (dirfd) => raw.readdir(dirfd),
    leaseProbe: inline(raw.leaseProbeSync),
    exchangeChecked: raw.exchangeChecked,
    preadNowait: raw.preadNowait,
    trimMemory: raw.trimMemory,
    flock: (fd, op) => {
      if (op & c.LOCK_UN || op & c.LOCK_NB) return inline(raw.flockSync)(fd, op);
      try {
        raw.flockSync(fd, op | c.LOCK_NB);
        return Promise.resolve();
      } catch (e) {
        return errCode(e) === 'EWOULDBLOCK' || errCode(e) === 'EAGAIN' ? raw.flock(fd, op) : Promise.reject(e);
      }
    },
  };
}

let cached: NativeAddon | undefined;
let loadError: string | undefined;

/**
 * Where the addon may be, first found wins (scripts/native-install.mjs checks the same list): a build from
 * source (what `npm ci` in a checkout and the install-time fallback produce), then the binary prebuilt for
 * this platform, arch and C library in prebuildify's layout, which node-gyp-build would also find.
 */
export function addonCandidates(root: string = PACKAGE_ROOT): string[] {
  const libc = existsSync('/etc/alpine-release') ? 'musl' : 'glibc';
  return [
    path.join(root, 'build', 'Release', 'exocortex_native.node'),
    path.join(root, 'prebuilds', `${process.platform}-${process.arch}`, `exocortex.${libc}.node`),
  ];
}

/**
 * The addon, or undefined with `nativeLoadError()` saying why. $EXOCORTEX_NATIVE_ADDON names the one file to
 * load; otherwise each candidate that exists is tried in order, so a stale or foreign build/Release (another
 * arch, another libc) falls through to the prebuilt binary, and the error names every path and its fault.
 */
export function loadNative(): NativeAddon | undefined {
  if (cached || loadError) return cached;
  const override = process.env.EXOCORTEX_NATIVE_ADDON;
  const candidates = override ? [override] : addonCandidates();
  const faults: string[] = [];
  const load = createRequire(import.meta.url);
  for (const file of candidates) {
    if (!existsSync(file)) {
      faults.push(`${file} does not exist`);
      continue;
    }
    try {
      const raw = load(file) as RawAddon;
      // EXOCORTEX_NATIVE_POOL=1 keeps every call on the pool (a vault on a network filesystem, where a lookup
      // is a round trip to the server).
      cached =
        process.env.EXOCORTEX_NATIVE_POOL === '1'
          ? { ...raw, preadNowait: undefined, leaseProbe: (fd) => Promise.resolve().then(() => raw.leaseProbeSync(fd)) }
          : onCallingThread(raw);
      return cached;
    } catch (e) {
      faults.push(`${file} failed to load (${(e as Error).message.split('\n')[0]})`);
    }
  }
  loadError = faults.join('; ');
  return undefined;
}

/**
 * The sentence a command that needs the native core prints when it cannot load, naming the fix: the
 * platforms the package ships binaries for, and the build from source for any other.
 */
export function nativeRefusal(reason: string): string {
  return [
    `the native vault core (exocortex_native.node) cannot be loaded on ${process.platform}-${process.arch}: ${reason}.`,
    'This package ships prebuilt binaries for linux-x64 and linux-arm64 (glibc). Elsewhere, build it from',
    `source (needs g++, make and python3): cd ${PACKAGE_ROOT} && npx node-gyp rebuild`,
    'The server does not start without it: its vault writes and its database lock depend on it.',
  ].join('\n');
}

export function nativeLoadError(): string | undefined {
  loadNative();
  return loadError;
}

export interface SysError extends Error {
  code?: string;
  errno?: number;
  syscall?: string;
}

export function errCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null ? (e as SysError).code : undefined;
}
