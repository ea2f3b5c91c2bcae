// exocortex vaults add | list | remove: vault roots, each with its own index.
import type { VaultView } from '../host/admin/account-operations.js';
import type { Settings } from '../host/settings/load.js';
import { resolvePath } from '../host/settings/paths.js';
import { loadAccounts, reachOwner, withAccounts } from './owner.js';

export async function vaultsAdd(
  settings: Settings,
  name: string,
  root: string,
  opts: { shared?: boolean },
): Promise<void> {
  const { vaultsAddOp } = await loadAccounts();
  // The path is the operator's, typed here: resolve it against this shell's directory, not the server's.
  const input = {
    name,
    root: resolvePath({ ...settings, baseDir: process.cwd() }, root),
    shared: opts.shared === true,
  };
  const vault = await reachOwner(
    settings,
    (owner) => owner.post<{ vault: VaultView }>('/v1/vaults', input).then((r) => r.vault),
    () => withAccounts(settings, (t) => vaultsAddOp(t, input)),
  );
  process.stderr.write(
    `added vault ${vault.name} at ${vault.root} (${vault.status.state}); bind a user with: exocortex users add NAME --vault ${vault.name}\n`,
  );
}

export async function vaultsList(settings: Settings): Promise<void> {
  const { vaultsListOp, renderVaults } = await loadAccounts();
  const vaults = await reachOwner(
    settings,
    (owner) => owner.get<{ vaults: VaultView[] }>('/v1/vaults').then((r) => r.vaults),
    () => withAccounts(settings, (t) => vaultsListOp(t)),
  );
  process.stdout.write(renderVaults(vaults) + '\n');
}

export async function vaultsRemove(settings: Settings, name: string, opts: { force?: boolean }): Promise<void> {
  const { vaultsRemoveOp } = await loadAccounts();
  const force = opts.force === true;
  const r = await reachOwner(
    settings,
    (owner) => owner.post<{ removed: string; usersDisabled: string[] }>('/v1/vaults/remove', { name, force }),
    () => withAccounts(settings, (t) => vaultsRemoveOp(t, name, force)),
  );
  process.stderr.write(
    `removed vault ${r.removed} (its files are untouched)${r.usersDisabled.length ? `; disabled its users ${r.usersDisabled.join(', ')}` : ''}\n`,
  );
}
