// VaultCore: the root descriptor and every path → descriptor step. Each directory below the root is opened
// by openat2(RESOLVE_BENEATH|NO_SYMLINKS|NO_MAGICLINKS) from the root fd; reads may follow in-vault
// symlinks by re-resolving their text lexically (still kernel-confined); writes refuse any symlink.

import { constants as fsConstants } from 'node:fs';
import { Refusal } from '../../sdk/refusals.js';
import type { Logger } from '../../sdk/types.js';
import type { VaultCapabilities, VaultEntry, VaultStat } from '../../sdk/vault.js';
import { closeFd, fsyncFd } from './fd-io.js';
import { errCode, type NativeAddon, type NativeStat } from './native.js';
import { checkVaultPath, resolveLinkText, splitPath } from './path-guard.js';

export const STAGE_PREFIX = '.exo-stage-';
export const STAGE_RE = /^\.exo-stage-[0-9a-f]{16}$/;
const MAX_HOPS = 40;

/** A directory descriptor; `close` is a no-op for the root. */
export interface DirHandle {
  readonly fd: number;
  /** Vault-relative path of the folder ('' = root). */
  readonly rel: string;
  close(): Promise<void>;
}

/** A folder removed or swapped while a write was creating inside it. */
function folderGone(dir: string): Refusal {
  return new Refusal(
    'concurrent_write',
    { path: dir, currentHash: null },
    `The folder "${dir}" was removed or replaced while this write was creating it; nothing was written.`,
  );
}

/** Serialises async critical sections per key (in-process; flock covers other processes). */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();
  async lock(key: string): Promise<() => void> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = prev.then(() => mine);
    this.tails.set(key, tail);
    await prev;
    return () => {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
  }
}

/** Operator choices the core enforces (vault.* settings). */
export interface VaultPolicy {
  /** Serve, index and write files whose inode has more than one name (vault.allowHardLinks). */
  readonly allowHardLinks: boolean;
  /** How long a replace waits for another program to close a note it holds open for writing (vault.openWriterWaitMs). */
  readonly openWriterWaitMs: number;
}

export const DEFAULT_VAULT_POLICY: VaultPolicy = { allowHardLinks: false, openWriterWaitMs: 100 };

export class VaultCore {
  readonly res: number;
  readonly dirFlags: number;
  readonly readFlags: number;
  readonly mutex = new KeyedMutex();
  /** Staging names currently between link and rename (never swept). */
  readonly inFlight = new Set<string>();
  closed = false;

  constructor(
    readonly n: NativeAddon,
    readonly rootFd: number,
    readonly rootAbs: string,
    readonly capabilities: VaultCapabilities,
    readonly policy: VaultPolicy = DEFAULT_VAULT_POLICY,
    readonly log?: Logger,
  ) {
    const c = n.constants;
    this.res = c.RESOLVE_BENEATH | c.RESOLVE_NO_SYMLINKS | c.RESOLVE_NO_MAGICLINKS;
    this.dirFlags = c.O_RDONLY | c.O_DIRECTORY;
    this.readFlags = c.O_RDONLY | c.O_NOFOLLOW | fsConstants.O_NONBLOCK;
  }

  get c() {
    return this.n.constants;
  }

  assertOpen(): void {
    if (this.closed) throw new Refusal('service_unavailable', { service: 'vault', reason: 'the vault is closed' });
  }

  rootHandle(): DirHandle {
    return { fd: this.rootFd, rel: '', close: async () => {} };
  }

  async openDirAt(dirFd: number, rel: string, name: string): Promise<DirHandle> {
    const fd = await this.n.openat2(dirFd, name, this.dirFlags, 0, this.res);
    return { fd, rel, close: () => closeFd(fd) };
  }

  /** Open folder `rel` (symlink-free path) from the root. */
  async openDir(rel: string): Promise<DirHandle> {
    if (rel === '') return this.rootHandle();
    return this.openDirAt(this.rootFd, rel, rel);
  }

  /** The first symlink on `rel` (an intermediate or the final component), with its text. */
  async findSymlink(rel: string): Promise<{ path: string; target: string } | undefined> {
    const parts = rel.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const prefix = parts.slice(0, i).join('/');
      let st: NativeStat;
      try {
        st = await this.n.inspect(this.rootFd, prefix, this.res);
      } catch {
        return undefined;
      }
      if (st.kind === 'symlink') return { path: prefix, target: st.link?.toString('utf8') ?? '' };
    }
    return undefined;
  }

  async symlinkRefusal(rel: string, fallbackPath: string): Promise<Refusal> {
    const link = await this.findSymlink(rel);
    return new Refusal('is_symlink', { path: link?.path ?? fallbackPath, target: link?.target ?? '?' });
  }

  /**
   * Folder for a write: opens `dir` with no symlink anywhere on it; `create` makes missing folders (each
   * parent fsynced). Refuses is_symlink / not_a_directory / not_found.
   */
  async openWriteDir(dir: string, create: boolean, forPath: string): Promise<DirHandle> {
    if (dir === '') return this.rootHandle();
    try {
      return await this.openDir(dir);
    } catch (e) {
      const code = errCode(e);
      if (code === 'ELOOP') throw await this.symlinkRefusal(dir, dir);
      if (code === 'ENOTDIR') throw await this.notDirRefusal(dir);
      if (code !== 'ENOENT') throw e;
      if (!create) throw new Refusal('not_found', { path: forPath });
    }
    return this.mkdirs(dir);
  }

  private async notDirRefusal(dir: string): Promise<Refusal> {
    const parts = dir.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const prefix = parts.slice(0, i).join('/');
      try {
        const st = await this.n.inspect(this.rootFd, prefix, this.res);
        if (st.kind !== 'directory') return new Refusal('not_a_directory', { path: prefix });
      } catch {
        break;
      }
    }
    return new Refusal('not_a_directory', { path: dir });
  }

  /** Create every missing folder of `dir` one component at a time from the root. */
  async mkdirs(dir: string): Promise<DirHandle> {
    const parts = dir.split('/');
    let cur = this.rootHandle();
    try {
      for (let i = 0; i < parts.length; i++) {
        const name = parts[i];
        const rel = parts.slice(0, i + 1).join('/');
        let next: DirHandle | undefined;
        for (let attempt = 0; !next; attempt++) {
          try {
            next = await this.openDirAt(cur.fd, rel, name);
          } catch (e) {
            const code = errCode(e);
            if (code === 'ELOOP') throw await this.symlinkRefusal(rel, rel);
            if (code === 'ENOTDIR') throw new Refusal('not_a_directory', { path: rel });
            if (code !== 'ENOENT') throw e;
            if (attempt > 3) throw folderGone(dir);
            try {
              await this.n.mkdirat(cur.fd, name, 0o755);
              await fsyncFd(cur.fd);
            } catch (m) {
              const mc = errCode(m);
              if (mc === 'ENOENT' || mc === 'ENOTDIR') throw folderGone(dir); // a parent was removed meanwhile
              if (mc !== 'EEXIST') throw m;
            }
          }
        }
        await cur.close();
        cur = next;
      }
      return cur;
    } catch (e) {
      await cur.close();
      throw e;
    }
  }

  /**
   * Resolve `p` for reading: follow symlinks (intermediate and, when `followFinal`, final) only while their
   * targets stay inside the vault and within the guard's reach. Returns a symlink-free path and its stat.
   */
  async resolveRead(p: string, followFinal = true): Promise<{ rel: string; st: NativeStat }> {
    let cur = p;
    for (let hop = 0; hop < MAX_HOPS; hop++) {
      let st: NativeStat;
      try {
        st =
          cur === ''
            ? await this.n.statx(this.rootFd, '', this.c.AT_EMPTY_PATH, this.c.STATX_BASIC_STATS)
            : await this.n.inspect(this.rootFd, cur, this.res);
      } catch (e) {
        const code = errCode(e);
        if (code === 'ENOENT' || code === 'ENOTDIR') throw new Refusal('not_found', { path: p });
        if (code !== 'ELOOP') throw e;
        const link = await this.findSymlink(cur);
        if (!link) throw new Refusal('not_found', { path: p });
        const rest = cur.slice(link.path.length);
        cur = this.followLink(p, link.path, link.target) + rest;
        if (cur.startsWith('/')) cur = cur.slice(1);
        continue;
      }
      if (st.kind !== 'symlink' || !followFinal) return { rel: cur, st };
      cur = this.followLink(p, cur, st.link?.toString('utf8') ?? '');
    }
    throw new Refusal('is_symlink', { path: p, target: 'a chain of more than 40 links' });
  }

  private followLink(p: string, linkPath: string, target: string): string {
    const resolved = resolveLinkText(splitPath(linkPath).dir, target, this.rootAbs);
    if (resolved === undefined) throw new Refusal('is_symlink', { path: p, target });
    if (resolved !== '') {
      try {
        checkVaultPath(resolved);
      } catch {
        throw new Refusal('is_symlink', { path: p, target });
      }
    }
    return resolved;
  }

  /** Open a regular file for reading, following in-vault symlinks; returns the fd and its stat. */
  async openRead(p: string): Promise<number> {
    try {
      return await this.n.openat2(this.rootFd, p, this.readFlags, 0, this.res);
    } catch (e) {
      const code = errCode(e);
      if (code === 'ENOENT' || code === 'ENOTDIR') throw new Refusal('not_found', { path: p });
      if (code !== 'ELOOP') throw e;
    }
    for (let attempt = 0; attempt < 3; attempt++) {
      const { rel } = await this.resolveRead(p);
      if (rel === '') throw new Refusal('is_directory', { path: p });
      try {
        return await this.n.openat2(this.rootFd, rel, this.readFlags, 0, this.res);
      } catch (e) {
        const code = errCode(e);
        if (code === 'ENOENT' || code === 'ENOTDIR') throw new Refusal('not_found', { path: p });
        if (code !== 'ELOOP') throw e;
      }
    }
    throw new Refusal('is_symlink', { path: p, target: 'a link that keeps changing' });
  }

  toEntry(path: string, st: NativeStat, linkDir: string): VaultStat {
    const kind = st.kind === 'directory' ? 'directory' : st.kind === 'symlink' ? 'symlink' : 'file';
    const base = {
      path,
      kind,
      size: st.size,
      mtimeMs: st.mtimeMs,
      ctimeMs: st.ctimeMs,
      ino: st.ino,
      nlink: st.nlink,
      mountId: st.mntId ?? 0,
    } as const;
    if (kind !== 'symlink') return base;
    const linkTarget = st.link?.toString('utf8') ?? '';
    const resolved = resolveLinkText(linkDir, linkTarget, this.rootAbs);
    let linkInside = resolved !== undefined;
    if (resolved) {
      try {
        checkVaultPath(resolved);
      } catch {
        linkInside = false;
      }
    }
    return { ...base, linkTarget, linkInside };
  }

  static entryOnly(s: VaultStat): VaultEntry {
    const { path, kind, size, mtimeMs, linkTarget, linkInside } = s;
    return linkTarget === undefined
      ? { path, kind, size, mtimeMs }
      : { path, kind, size, mtimeMs, linkTarget, linkInside };
  }
}
