// vault.readOnly: a VaultFs that serves every read and refuses every change (create, replace, move,
// trash, unlink, mkdirp) with vault_read_only, whatever family or route asks. The host wraps the vault
// in it, so no write path — a family's own, a route's upload — can get past the switch.
import { Refusal } from '../../sdk/refusals.js';
import type { VaultFs } from '../../sdk/vault.js';

const WRITES: ReadonlySet<PropertyKey> = new Set(['create', 'replace', 'move', 'trash', 'unlink', 'mkdirp']);

export function readOnlyVault(fs: VaultFs): VaultFs {
  return new Proxy(fs, {
    get(target, prop) {
      if (WRITES.has(prop)) {
        return async (): Promise<never> => {
          throw new Refusal('vault_read_only', { tool: `a ${String(prop)}` });
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      // Bound to the real vault: its methods may use private state a proxy receiver would not have.
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
