// openVault: creates/opens the vault root, runs the capability probes (refusing to start, naming what is
// missing) and assembles the VaultFs object over the native core.

import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Refusal } from '../../sdk/refusals.js';
import type { Logger } from '../../sdk/types.js';
import type { VaultCapabilities, VaultFs } from '../../sdk/vault.js';
import { probe } from './capabilities.js';
import { DEFAULT_VAULT_POLICY, VaultCore } from './core.js';
import { closeFd } from './fd-io.js';
import { loadNative, nativeLoadError } from './native.js';
import { checkVaultPath, contentHash } from './path-guard.js';
import { list, readAppConfig, readBytes, readText, readTextWithStat, statPath, walk } from './reads.js';
import { create, mkdirp, move, replace, trash, unlink } from './writes.js';

export interface OpenVaultOptions {
  /** Waive O_TMPFILE: stage under a named dot-file instead (reported as capabilities.namedStaging). */
  readonly allowNamedStaging?: boolean;
  /** Testing only: stage under named dot-files even where O_TMPFILE works (exercises the waiver path). */
  readonly forceNamedStaging?: boolean;
  /** Serve and write files with a link count above 1 (vault.allowHardLinks); refused by default. */
  readonly allowHardLinks?: boolean;
  /** vault.openWriterWaitMs: how long a replace waits for an outside writer holding the note open. */
  readonly openWriterWaitMs?: number;
  /** Where the write path reports outside versions it kept aside. */
  readonly log?: Logger;
}

const AT_FDCWD = -100;

export async function openVault(root: string, options: OpenVaultOptions = {}): Promise<VaultFs> {
  if (process.platform !== 'linux')
    throw new Refusal('unsupported_filesystem', { reason: `the vault needs Linux (this is ${process.platform})` });
  const n = loadNative();
  if (!n) throw new Refusal('unsupported_filesystem', { reason: nativeLoadError() ?? 'native addon unavailable' });
  const abs = path.resolve(root);
  await mkdir(abs, { recursive: true });
  const c = n.constants;
  const rootFd = await n.openat2(AT_FDCWD, abs, c.O_RDONLY | c.O_DIRECTORY, 0, 0);
  let capabilities: VaultCapabilities;
  try {
    const p = await probe(n, rootFd);
    if (options.forceNamedStaging) p.tmpfile.ok = false;
    const missing = [p.kernel, p.openat2, p.hardlinks, p.renameNoReplace, p.statxMountId].filter((x) => !x.ok);
    if (!p.tmpfile.ok && !options.allowNamedStaging && !options.forceNamedStaging) missing.unshift(p.tmpfile);
    if (missing.length) {
      throw new Refusal('unsupported_filesystem', {
        reason: missing.map((m) => `${m.name}: ${m.detail}${m.fix ? ` (fix: ${m.fix})` : ''}`).join('; '),
      });
    }
    capabilities = {
      openat2: true,
      tmpfile: p.tmpfile.ok,
      renameNoReplace: true,
      statxMountId: true,
      namedStaging: !p.tmpfile.ok,
      engine: 'native',
    };
  } catch (e) {
    await closeFd(rootFd);
    throw e;
  }
  const core = new VaultCore(
    n,
    rootFd,
    abs,
    capabilities,
    {
      allowHardLinks: options.allowHardLinks ?? DEFAULT_VAULT_POLICY.allowHardLinks,
      openWriterWaitMs: options.openWriterWaitMs ?? DEFAULT_VAULT_POLICY.openWriterWaitMs,
    },
    options.log,
  );
  const vault: VaultFs = {
    root: abs,
    capabilities,
    checkPath: checkVaultPath,
    stat: (p) => statPath(core, p),
    async exists(p) {
      try {
        await statPath(core, p);
        return true;
      } catch (e) {
        if (e instanceof Refusal && (e.code === 'not_found' || e.code === 'is_symlink')) return false;
        throw e;
      }
    },
    readBytes: (p, o) => readBytes(core, p, o),
    readText: (p, o) => readText(core, p, o),
    readTextWithStat: (p, o) => readTextWithStat(core, p, o),
    readAppConfig: (file) => readAppConfig(core, file),
    list: (folder, o) => list(core, folder, o),
    walk: () => walk(core),
    contentHash,
    create: (p, bytes) => create(core, p, bytes),
    replace: (p, bytes, o) => replace(core, p, bytes, o),
    move: (from, to) => move(core, from, to),
    trash: (p) => trash(core, p),
    unlink: (p) => unlink(core, p),
    mkdirp: (p) => mkdirp(core, p),
    async close() {
      if (core.closed) return;
      core.closed = true;
      await closeFd(rootFd);
    },
  };
  return vault;
}
