// Vault root identity: what a root really is once symlinks and bind mounts are seen through, so that two
// vaults can never serve the same files. Reads metadata only (realpath, stat, the mount table), never a note.
import { readFileSync } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { Refusal } from '../../sdk/refusals.js';

/** One directory on the way from a root up to `/`, by device and inode. */
export interface DirIdentity {
  readonly path: string;
  readonly dev: number;
  readonly ino: number;
}

export interface RootIdentity {
  /** The root as configured (absolute). */
  readonly root: string;
  /** After symlinks. */
  readonly real: string;
  /** The root itself first, then each ancestor up to `/`. */
  readonly chain: readonly DirIdentity[];
  /** Where the root lies inside its filesystem (through bind mounts): the mount's device and the path in it. */
  readonly inFilesystem?: { readonly device: string; readonly path: string };
}

export type Overlap = 'is the same folder as' | 'lies inside' | 'contains';

/**
 * Examine a root: it must exist and be a directory. Refuses vault_root_unusable with the reason otherwise.
 * `mountTable` is the text of /proc/self/mountinfo (read when not given; absent off Linux).
 */
export async function examineRoot(
  root: string,
  mountTable: string | undefined = readMountTable(),
): Promise<RootIdentity> {
  const abs = path.resolve(root);
  let real: string;
  try {
    real = await realpath(abs);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new Refusal('vault_root_unusable', {
      root: abs,
      reason:
        code === 'ENOENT'
          ? 'it does not exist (create the folder first)'
          : code === 'EACCES'
            ? 'this server may not read it (permission denied)'
            : `it cannot be examined (${code ?? e})`,
    });
  }
  const chain: DirIdentity[] = [];
  for (let dir = real; ; dir = path.dirname(dir)) {
    let st;
    try {
      st = await stat(dir);
    } catch (e) {
      throw new Refusal('vault_root_unusable', {
        root: abs,
        reason: `${dir} cannot be examined (${(e as NodeJS.ErrnoException).code ?? e})`,
      });
    }
    if (dir === real && !st.isDirectory())
      throw new Refusal('vault_root_unusable', { root: abs, reason: 'it is not a folder' });
    chain.push({ path: dir, dev: st.dev, ino: st.ino });
    if (dir === path.dirname(dir)) break;
  }
  const inFilesystem = mountTable ? locateInFilesystem(real, parseMountTable(mountTable)) : undefined;
  return { root: abs, real, chain, ...(inFilesystem ? { inFilesystem } : {}) };
}

/** How `a` relates to `b`, or undefined when they are apart. Pure: compares identities, touches nothing. */
export function overlapOf(a: RootIdentity, b: RootIdentity): Overlap | undefined {
  const same = (x: DirIdentity, y: DirIdentity) => x.dev === y.dev && x.ino === y.ino;
  if (same(a.chain[0], b.chain[0])) return 'is the same folder as';
  if (a.chain.slice(1).some((d) => same(d, b.chain[0]))) return 'lies inside';
  if (b.chain.slice(1).some((d) => same(d, a.chain[0]))) return 'contains';
  // A bind mount of a folder below another root shares no inode with that root's chain: compare where
  // each root lies inside its filesystem instead.
  const fa = a.inFilesystem;
  const fb = b.inFilesystem;
  if (fa && fb && fa.device === fb.device) {
    if (fa.path === fb.path) return 'is the same folder as';
    if (isBelow(fa.path, fb.path)) return 'lies inside';
    if (isBelow(fb.path, fa.path)) return 'contains';
  }
  return undefined;
}

/** Refuse vault_overlap for the first of `others` that `candidate` overlaps. */
export function refuseOverlap(
  candidate: RootIdentity,
  others: ReadonlyArray<{ readonly name: string; readonly identity: RootIdentity }>,
): void {
  for (const other of others) {
    const relation = overlapOf(candidate, other.identity);
    if (relation)
      throw new Refusal('vault_overlap', {
        root: candidate.root,
        relation,
        other: other.identity.root,
        otherVault: other.name,
      });
  }
}

export interface MountEntry {
  readonly device: string;
  /** The folder of the mounted filesystem that appears at mountPoint (`/` unless a bind mount). */
  readonly fsRoot: string;
  readonly mountPoint: string;
}

/** Lines of /proc/self/mountinfo: `id parent major:minor root mountpoint …`, with octal escapes. */
export function parseMountTable(text: string): MountEntry[] {
  const unescape = (s: string) => s.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));
  const out: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const f = line.split(' ');
    if (f.length < 5 || !/^\d+:\d+$/.test(f[2])) continue;
    out.push({ device: f[2], fsRoot: unescape(f[3]), mountPoint: unescape(f[4]) });
  }
  return out;
}

/** The mount holding `real` (the deepest mount point above it; the later of two at one point) and the path in it. */
export function locateInFilesystem(
  real: string,
  mounts: readonly MountEntry[],
): { device: string; path: string } | undefined {
  let best: MountEntry | undefined;
  for (const m of mounts) {
    if (m.mountPoint !== real && !isBelow(real, m.mountPoint)) continue;
    if (!best || m.mountPoint.length >= best.mountPoint.length) best = m;
  }
  if (!best) return undefined;
  const rest = real.slice(best.mountPoint === '/' ? 0 : best.mountPoint.length);
  return { device: best.device, path: rest ? path.posix.join(best.fsRoot, rest) : best.fsRoot };
}

function isBelow(p: string, dir: string): boolean {
  if (dir === '/') return p !== '/';
  return p.startsWith(dir + '/');
}

function readMountTable(): string | undefined {
  try {
    return readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return undefined;
  }
}

/** Why a served root is no longer the folder it was when opened (vanished, replaced), or undefined. */
export async function rootGone(identity: RootIdentity): Promise<string | undefined> {
  try {
    const st = await stat(identity.real);
    if (!st.isDirectory()) return 'its root is no longer a folder';
    if (st.dev !== identity.chain[0].dev || st.ino !== identity.chain[0].ino)
      return 'its root folder was replaced by another one';
    return undefined;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? 'its root folder vanished' : `its root folder cannot be examined (${code ?? 'error'})`;
  }
}
