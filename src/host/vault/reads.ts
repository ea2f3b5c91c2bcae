// Read side of the vault: stat, bounded byte reads, strict UTF-8 text, folder listings and the indexer's
// walk. Listings never follow symlinks (they are reported with their text and whether they stay inside).

import picomatch from 'picomatch';
import { Refusal } from '../../sdk/refusals.js';
import type { ListOptions, ReadOptions, VaultEntry, VaultStat } from '../../sdk/vault.js';
import { VaultCore, STAGE_RE, type DirHandle } from './core.js';
import { closeFd, fstatFd, readAll } from './fd-io.js';
import { errCode, type NativeDirEntry } from './native.js';
import { checkFolder, checkVaultPath, decodeStrict, splitPath } from './path-guard.js';

const NAME_DECODER = new TextDecoder('utf-8', { fatal: true });

/** Entry name as a string, or undefined for dot-names and names that are not valid UTF-8 (unreachable). */
function entryName(e: NativeDirEntry): string | undefined {
  if (e.name[0] === 0x2e) return undefined;
  try {
    return NAME_DECODER.decode(e.name);
  } catch {
    return undefined;
  }
}

export async function statPath(core: VaultCore, p: string): Promise<VaultStat> {
  checkVaultPath(p);
  core.assertOpen();
  const { dir, name } = splitPath(p);
  try {
    const st = await core.n.inspect(core.rootFd, p, core.res);
    return core.toEntry(p, st, dir);
  } catch (e) {
    const code = errCode(e);
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new Refusal('not_found', { path: p });
    if (code !== 'ELOOP') throw e;
  }
  // An intermediate symlink: resolve the folder (in-vault links only), then look at the final name.
  const parent = await core.resolveRead(dir);
  try {
    const st = await core.n.inspect(core.rootFd, parent.rel === '' ? name : `${parent.rel}/${name}`, core.res);
    return core.toEntry(p, st, parent.rel);
  } catch (e) {
    const code = errCode(e);
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP') throw new Refusal('not_found', { path: p });
    throw e;
  }
}

/** The file's bytes and the descriptor's modification time, from one open. */
async function readOpened(core: VaultCore, p: string, o: ReadOptions): Promise<{ bytes: Buffer; mtimeMs: number }> {
  checkVaultPath(p);
  core.assertOpen();
  const fd = await core.openRead(p);
  try {
    const st = await fstatFd(fd);
    if (st.isDirectory()) throw new Refusal('is_directory', { path: p });
    if (!st.isFile()) throw new Refusal('invalid_path', { path: p, reason: 'not a regular file' });
    if (st.nlink > 1 && !core.policy.allowHardLinks) throw new Refusal('hard_link', { path: p, links: st.nlink });
    const limit = o.maxBytes;
    if (limit !== undefined && st.size > limit) throw new Refusal('too_large', { path: p, size: st.size, limit });
    const bytes = await readAll(fd, st.size, limit);
    if (limit !== undefined && bytes.length > limit)
      throw new Refusal('too_large', { path: p, size: bytes.length, limit });
    return { bytes, mtimeMs: st.mtimeMs };
  } finally {
    await closeFd(fd);
  }
}

export async function readBytes(core: VaultCore, p: string, o: ReadOptions = {}): Promise<Buffer> {
  return (await readOpened(core, p, o)).bytes;
}

export async function readText(core: VaultCore, p: string, o?: ReadOptions): Promise<string> {
  return decodeStrict(p, await readBytes(core, p, o));
}

export async function readTextWithStat(
  core: VaultCore,
  p: string,
  o: ReadOptions = {},
): Promise<{ text: string; size: number; mtimeMs: number }> {
  const { bytes, mtimeMs } = await readOpened(core, p, o);
  return { text: decodeStrict(p, bytes), size: bytes.length, mtimeMs };
}

const APP_CONFIG = /^(?:[A-Za-z0-9_-]{1,64}\.json|plugins\/[A-Za-z0-9._-]{1,100}\/data\.json)$/;
const APP_CONFIG_MAX_BYTES = 1024 * 1024;

/** `.obsidian/<file>` for the few settings files families read; no symlink is followed. */
export async function readAppConfig(core: VaultCore, file: string): Promise<string | undefined> {
  const p = `.obsidian/${file}`;
  if (!APP_CONFIG.test(file) || file.includes('..'))
    throw new Refusal('invalid_path', {
      path: p,
      reason: 'only .obsidian/<name>.json and .obsidian/plugins/<id>/data.json can be read',
    });
  core.assertOpen();
  let fd: number;
  try {
    fd = await core.n.openat2(core.rootFd, p, core.readFlags, 0, core.res);
  } catch (e) {
    const code = errCode(e);
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    if (code === 'ELOOP') throw new Refusal('is_symlink', { path: p, target: '(not followed for settings files)' });
    throw e;
  }
  try {
    const st = await fstatFd(fd);
    if (!st.isFile()) throw new Refusal('invalid_path', { path: p, reason: 'not a regular file' });
    if (st.size > APP_CONFIG_MAX_BYTES)
      throw new Refusal('too_large', { path: p, size: st.size, limit: APP_CONFIG_MAX_BYTES });
    return decodeStrict(p, await readAll(fd, st.size, APP_CONFIG_MAX_BYTES));
  } finally {
    await closeFd(fd);
  }
}

export async function list(core: VaultCore, folder: string, o: ListOptions = {}): Promise<VaultEntry[]> {
  const base = checkFolder(folder);
  core.assertOpen();
  let dir: DirHandle;
  if (base === '') dir = core.rootHandle();
  else {
    const { rel, st } = await core.resolveRead(base);
    if (st.kind !== 'directory') throw new Refusal('not_a_directory', { path: folder });
    dir = await core.openDir(rel).catch((e: unknown) => {
      const code = errCode(e);
      if (code === 'ENOENT') throw new Refusal('not_found', { path: folder });
      if (code === 'ENOTDIR' || code === 'ELOOP') throw new Refusal('not_a_directory', { path: folder });
      throw e;
    });
  }
  const match = o.pattern ? picomatch(o.pattern, { dot: false }) : undefined;
  const limit = o.limit ?? Number.POSITIVE_INFINITY;
  const out: VaultEntry[] = [];
  const visit = async (h: DirHandle, rel: string): Promise<void> => {
    const entries = await core.n.readdir(h.fd);
    const named = entries
      .map((e) => [entryName(e), e] as const)
      .filter((x): x is readonly [string, NativeDirEntry] => x[0] !== undefined);
    named.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    for (const [name, e] of named) {
      if (out.length >= limit) return;
      if (e.kind === 'other') continue;
      const r = rel ? `${rel}/${name}` : name;
      const full = base ? `${base}/${r}` : r;
      if (!match || match(r)) out.push(VaultCore.entryOnly(core.toEntry(full, e, splitPath(full).dir)));
      if (o.recursive && e.kind === 'directory' && out.length < limit) {
        let sub: DirHandle;
        try {
          sub = await core.openDirAt(h.fd, r, name);
        } catch {
          continue; // vanished or swapped for a symlink meanwhile: not followed
        }
        try {
          await visit(sub, r);
        } finally {
          await sub.close();
        }
      }
    }
  };
  try {
    await visit(dir, '');
  } finally {
    await dir.close();
  }
  return out;
}

/** Depth-first walk of the whole vault; also removes staging names a crash left behind. */
export async function* walk(core: VaultCore): AsyncIterable<VaultEntry> {
  core.assertOpen();
  const visit = async function* (h: DirHandle): AsyncGenerator<VaultEntry> {
    const entries = await core.n.readdir(h.fd);
    const named: Array<readonly [string, NativeDirEntry]> = [];
    for (const e of entries) {
      const raw = e.name.toString('latin1');
      if (e.kind === 'file' && STAGE_RE.test(raw) && !core.inFlight.has(raw)) {
        await core.n.unlinkat(h.fd, raw, 0).catch(() => undefined);
        continue;
      }
      const name = entryName(e);
      if (name !== undefined && e.kind !== 'other') named.push([name, e]);
    }
    named.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    for (const [name, e] of named) {
      const r = h.rel ? `${h.rel}/${name}` : name;
      yield VaultCore.entryOnly(core.toEntry(r, e, h.rel));
      if (e.kind !== 'directory') continue;
      let sub: DirHandle;
      try {
        sub = await core.openDirAt(h.fd, r, name);
      } catch {
        continue;
      }
      try {
        yield* visit(sub);
      } finally {
        await sub.close();
      }
    }
  };
  yield* visit(core.rootHandle());
}
