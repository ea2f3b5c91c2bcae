// The one-owner rule for an embedded database: an exclusive flock on `exocortex.lock` inside the PGlite
// directory, taken before PGlite opens it and held for the life of the process (the kernel drops it when
// the process dies, so a SIGKILLed owner never blocks the next start). Never opens the database itself.
import { closeSync, mkdirSync, openSync, readFileSync, ftruncateSync, writeSync, constants as fsc } from 'node:fs';
import path from 'node:path';
import { errCode, loadNative, nativeLoadError } from '../vault/native.js';
import { PACKAGE_VERSION } from '../package-info.js';

export const LOCK_FILE = 'exocortex.lock';
export const ADMIN_SOCKET_FILE = 'exocortex.sock';

/** What the owner writes into the lock file, for the message a second opener prints. */
export interface OwnerInfo {
  readonly pid: number;
  readonly command: string;
  readonly startedAt: string;
  readonly version: string;
}

export class DatabaseLockedError extends Error {
  readonly code = 'database_locked';
  constructor(
    readonly dataDir: string,
    readonly owner: OwnerInfo | undefined,
  ) {
    const who = owner ? `PID ${owner.pid} (${owner.command}, since ${owner.startedAt})` : 'another process';
    super(
      `the database ${dataDir} is in use by ${who}; only one process may open it. ` +
        'Stop that process, or run exocortex commands while it runs: they reach it through its admin socket.',
    );
    this.name = 'DatabaseLockedError';
  }
}

export interface OwnerLock {
  readonly dataDir: string;
  release(): void;
}

const held = new Map<string, OwnerLock>();
const pending = new Set<string>();

/** Take the lock or throw DatabaseLockedError naming the owner (this process too, if it holds it already). */
export async function acquireOwnerLock(dataDir: string, command = describeCommand()): Promise<OwnerLock> {
  const dir = path.resolve(dataDir);
  if (held.has(dir) || pending.has(dir)) throw new DatabaseLockedError(dir, readOwner(dir));
  const native = loadNative();
  if (!native) throw new Error(`cannot lock the database ${dir}: ${nativeLoadError()}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, LOCK_FILE);
  const fd = openSync(file, fsc.O_RDWR | fsc.O_CREAT | fsc.O_NOFOLLOW, 0o600);
  pending.add(dir);
  try {
    await native.flock(fd, native.constants.LOCK_EX | native.constants.LOCK_NB);
  } catch (e) {
    closeSync(fd);
    pending.delete(dir);
    const code = errCode(e);
    if (code === 'EWOULDBLOCK' || code === 'EAGAIN') throw new DatabaseLockedError(dir, readOwner(dir));
    throw e;
  }
  pending.delete(dir);
  const info: OwnerInfo = { pid: process.pid, command, startedAt: new Date().toISOString(), version: PACKAGE_VERSION };
  ftruncateSync(fd, 0);
  writeSync(fd, JSON.stringify(info) + '\n', 0);
  let released = false;
  const lock: OwnerLock = {
    dataDir: dir,
    release() {
      if (released) return;
      released = true;
      held.delete(dir);
      // The file stays: unlinking it would let a newcomer lock a fresh inode while a waiter holds the old one.
      closeSync(fd);
    },
  };
  held.set(dir, lock);
  return lock;
}

/** The owner recorded in the lock file, if it can be read (it may be mid-write for a moment). */
export function readOwner(dataDir: string): OwnerInfo | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path.join(dataDir, LOCK_FILE), 'utf8')) as OwnerInfo;
    return typeof parsed.pid === 'number' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Whether some process holds the lock now (a probe: takes and drops it when free). */
export async function isLocked(dataDir: string): Promise<boolean> {
  const dir = path.resolve(dataDir);
  if (held.has(dir)) return true;
  const native = loadNative();
  if (!native) return false;
  let fd: number;
  try {
    fd = openSync(path.join(dir, LOCK_FILE), fsc.O_RDONLY | fsc.O_NOFOLLOW);
  } catch {
    return false;
  }
  try {
    await native.flock(fd, native.constants.LOCK_EX | native.constants.LOCK_NB);
    await native.flock(fd, native.constants.LOCK_UN);
    return false;
  } catch {
    return true;
  } finally {
    closeSync(fd);
  }
}

function describeCommand(): string {
  return [path.basename(process.argv[1] ?? 'node'), ...process.argv.slice(2)].join(' ').slice(0, 200);
}
