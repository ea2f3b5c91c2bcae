// Startup and `exocortex doctor` checks: kernel version, openat2, O_TMPFILE, hard links, RENAME_NOREPLACE
// and statx mount ids, each probed for real on the vault's own filesystem.

import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { closeFd } from './fd-io.js';
import { errCode, loadNative, nativeLoadError, type NativeAddon } from './native.js';

export interface PlatformCheck {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

export interface ProbeResult {
  readonly kernel: PlatformCheck;
  readonly openat2: PlatformCheck;
  readonly tmpfile: PlatformCheck;
  readonly hardlinks: PlatformCheck;
  readonly renameNoReplace: PlatformCheck;
  readonly statxMountId: PlatformCheck;
}

const AT_FDCWD = -100;

export function kernelVersion(release = os.release()): [number, number] {
  const m = /^(\d+)\.(\d+)/.exec(release);
  return m ? [Number(m[1]), Number(m[2])] : [0, 0];
}

function atLeast(v: [number, number], major: number, minor: number): boolean {
  return v[0] > major || (v[0] === major && v[1] >= minor);
}

const describe = (e: unknown) => errCode(e) ?? (e as Error).message ?? String(e);

/** Probe every guarantee on the directory `dirFd` (the vault root). Leaves nothing behind. */
export async function probe(n: NativeAddon, dirFd: number): Promise<ProbeResult> {
  const c = n.constants;
  const res = c.RESOLVE_BENEATH | c.RESOLVE_NO_SYMLINKS | c.RESOLVE_NO_MAGICLINKS;
  const v = kernelVersion();
  const kernel: PlatformCheck = atLeast(v, 5, 6)
    ? { name: 'kernel', ok: true, detail: `Linux ${os.release()} (>= 5.6)` }
    : {
        name: 'kernel',
        ok: false,
        detail: `Linux ${os.release()} is older than 5.6`,
        fix: 'run on Linux 5.6 or newer (5.8+ for statx mount ids)',
      };

  let openat2: PlatformCheck;
  try {
    await closeFd(await n.openat2(dirFd, '.', c.O_RDONLY | c.O_DIRECTORY, 0, res));
    openat2 = {
      name: 'openat2',
      ok: true,
      detail: 'openat2 with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS works',
    };
  } catch (e) {
    openat2 = {
      name: 'openat2',
      ok: false,
      detail: `openat2 failed: ${describe(e)}`,
      fix: 'Linux 5.6+ without a seccomp filter blocking openat2 (e.g. Docker >= 20.10)',
    };
  }

  const a = `.exo-probe-${randomBytes(8).toString('hex')}`;
  const b = `${a}-b`;
  let tmpfile: PlatformCheck;
  let hardlinks: PlatformCheck = {
    name: 'hard_links',
    ok: false,
    detail: 'not probed (needs O_TMPFILE or a named file)',
  };
  let renameNoReplace: PlatformCheck = { name: 'rename_noreplace', ok: false, detail: 'not probed' };
  let named = false;
  try {
    const fd = await n
      .openat2(dirFd, '.', c.O_TMPFILE | c.O_RDWR, 0o600, openat2.ok ? res : 0)
      .catch(async (e: unknown) => {
        tmpfile = {
          name: 'o_tmpfile',
          ok: false,
          detail: `O_TMPFILE is not supported here: ${describe(e)}`,
          fix: 'put the vault on ext4, xfs, btrfs or tmpfs, or set vault.allowNamedStaging: true',
        };
        named = true;
        return n.openat2(dirFd, a, c.O_RDWR | c.O_CREAT | c.O_EXCL, 0o600, 0);
      });
    tmpfile ??= { name: 'o_tmpfile', ok: true, detail: 'O_TMPFILE staging works on the vault filesystem' };
    try {
      if (!named) await n.linkat(fd, '', dirFd, a);
      await n.linkat(named ? dirFd : fd, named ? a : '', dirFd, b);
      const again = await n.linkat(named ? dirFd : fd, named ? a : '', dirFd, a).then(
        () => 'replaced',
        (e: unknown) => errCode(e),
      );
      hardlinks =
        again === 'EEXIST'
          ? {
              name: 'hard_links',
              ok: true,
              detail: named
                ? 'linkat works and refuses to replace (EEXIST)'
                : 'linkat publication of an O_TMPFILE works and refuses to replace (EEXIST)',
            }
          : { name: 'hard_links', ok: false, detail: `linkat onto an existing name gave ${again}, not EEXIST` };
    } catch (e) {
      hardlinks = {
        name: 'hard_links',
        ok: false,
        detail: `linkat failed: ${describe(e)}`,
        fix: 'put the vault on a filesystem with hard links (not FAT/exFAT or some network mounts)',
      };
    } finally {
      await closeFd(fd);
    }
    if (hardlinks.ok) {
      const r = await n.renameat2(dirFd, a, dirFd, b, c.RENAME_NOREPLACE).then(
        () => 'renamed',
        (e: unknown) => errCode(e),
      );
      renameNoReplace =
        r === 'EEXIST'
          ? {
              name: 'rename_noreplace',
              ok: true,
              detail: 'renameat2(RENAME_NOREPLACE) refuses an existing target (EEXIST)',
            }
          : {
              name: 'rename_noreplace',
              ok: false,
              detail: `renameat2(RENAME_NOREPLACE) onto an existing name gave ${r}`,
              fix: 'Linux 3.15+ on a local filesystem that supports RENAME_NOREPLACE',
            };
    }
  } catch (e) {
    tmpfile ??= {
      name: 'o_tmpfile',
      ok: false,
      detail: `could not create a file in the vault: ${describe(e)}`,
      fix: 'make the vault folder writable',
    };
  } finally {
    await n.unlinkat(dirFd, a, 0).catch(() => undefined);
    await n.unlinkat(dirFd, b, 0).catch(() => undefined);
  }

  let statxMountId: PlatformCheck;
  try {
    const st = await n.statx(dirFd, '', c.AT_EMPTY_PATH, c.STATX_BASIC_STATS | c.STATX_MNT_ID);
    statxMountId =
      (st.mask & c.STATX_MNT_ID) !== 0
        ? { name: 'statx_mount_id', ok: true, detail: `statx reports mount ids (vault on mount ${st.mntId})` }
        : {
            name: 'statx_mount_id',
            ok: false,
            detail: 'statx does not report STATX_MNT_ID',
            fix: 'Linux 5.8 or newer',
          };
  } catch (e) {
    statxMountId = {
      name: 'statx_mount_id',
      ok: false,
      detail: `statx failed: ${describe(e)}`,
      fix: 'Linux 5.8 or newer',
    };
  }
  return { kernel, openat2, tmpfile: tmpfile!, hardlinks, renameNoReplace, statxMountId };
}

/** For `exocortex doctor`: every check, on `root` (or its nearest existing ancestor when missing). */
export async function checkPlatform(root: string): Promise<{ checks: PlatformCheck[] }> {
  const checks: PlatformCheck[] = [];
  const platformOk = process.platform === 'linux';
  checks.push({
    name: 'platform',
    ok: platformOk,
    detail: `${process.platform} ${os.arch()}`,
    ...(platformOk ? {} : { fix: 'run the server on Linux' }),
  });
  const n = loadNative();
  if (!n) {
    checks.push({
      name: 'native_addon',
      ok: false,
      detail: nativeLoadError() ?? 'not loaded',
      fix: 'install the package on linux-x64 or linux-arm64 (glibc), which carry a prebuilt binary, or build it: npx node-gyp rebuild in the package folder (needs g++, make, python3)',
    });
    return { checks };
  }
  checks.push({ name: 'native_addon', ok: true, detail: 'exocortex_native.node loaded' });
  let dir = path.resolve(root);
  while (!existsSync(dir) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  let fd: number;
  try {
    fd = await n.openat2(AT_FDCWD, dir, n.constants.O_RDONLY | n.constants.O_DIRECTORY, 0, 0);
  } catch (e) {
    checks.push({
      name: 'vault_root',
      ok: false,
      detail: `cannot open ${dir}: ${describe(e)}`,
      fix: 'check vault.root',
    });
    return { checks };
  }
  try {
    const p = await probe(n, fd);
    checks.push(p.kernel, p.openat2, p.tmpfile, p.hardlinks, p.renameNoReplace, p.statxMountId);
  } finally {
    await closeFd(fd);
  }
  return { checks };
}
