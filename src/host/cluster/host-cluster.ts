// This process as one of several on one PostgreSQL server: it bids for vault leases (each vault served by
// the process holding its lease), starts or stops a vault's pipeline as its lease is won or lost, forwards
// calls for vaults it does not own, and shares the keys that seal input rounds and forwarded hops.
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Kysely } from 'kysely';
import type { Logger } from '../../sdk/types.js';
import { listVaults } from '../auth/vaults.js';
import { storedSecret } from '../db/stored-secret.js';
import type { Host } from '../host.js';
import { requestBodyLimit } from '../http/listener.js';
import { RequestStateSeal } from '../mcp/request-state.js';
import { seedWelcomeNote } from '../welcome.js';
import { Forwarder } from './forward.js';
import { VaultLeases } from './leases.js';

/** How long a vault handed back to rebalance waits for its write calls in flight before its pipeline stops. */
const HANDBACK_DRAIN_MS = 5000;

/** The leases of this process; `host` is undefined until the host is built (a callback before then finds nothing). */
export function hostLeases(
  host: () => Host | undefined,
  o: { url: string; db: Kysely<any>; log: Logger; bid: boolean; intervalMs: number },
): VaultLeases {
  return new VaultLeases({
    ...o,
    internalUrl: () => {
      const h = host();
      return h ? internalUrl(h) : null;
    },
    canServe: (id) => canServeVault(host()!, id),
    acquired: (id) => vaultOwnershipChanged(host()!, id, true),
    lost: (id) => vaultOwnershipChanged(host()!, id, false),
    drain: (id) => drainWrites(host()!, id),
  });
}

/** Input rounds sealed under a key every process on the server shares, so any process opens another's round. */
export async function sharedRequestStates(db: Kysely<any>): Promise<RequestStateSeal> {
  const { key } = await storedSecret(db, 'request-state-key', () => ({ key: randomBytes(32).toString('base64') }));
  return new RequestStateSeal(Buffer.from(key, 'base64'));
}

/** Forwards calls for vaults another process owns, signing each hop with the key every process shares. */
export async function hostForwarder(host: Host, leases: VaultLeases): Promise<Forwarder> {
  const { key } = await storedSecret(host.database.db, 'cluster-hop-key', () => ({
    key: randomBytes(32).toString('base64'),
  }));
  return new Forwarder({
    leases,
    key: Buffer.from(key, 'base64'),
    ceiling: () => scopeCeiling(host),
    families: () => [...host.manager.registry.generations.keys()],
    log: host.log,
    metrics: host.metrics,
    bodyLimitBytes: requestBodyLimit(host),
    operator: (id) => ({ ...host.operator, vaultId: id }),
  });
}

/** Where other processes forward this one's vaults' calls (cluster.internalUrl, else the listen address). */
function internalUrl(host: Host): string | null {
  const configured = host.settings.host.cluster.internalUrl;
  if (configured) return configured.replace(/\/$/, '');
  const addr = host.app?.server.address() as AddressInfo | null;
  if (!addr) return null;
  const unspecified = addr.address === '0.0.0.0' || addr.address === '::';
  const name = unspecified ? '127.0.0.1' : addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return `http://${name}:${addr.port}`;
}

/** The most a call forwarded from here may do: each serving family, read-only where this process is. */
function scopeCeiling(host: Host): string[] {
  const registry = host.manager.registry;
  return [...registry.generations.values()].map(
    (g) => `${g.name}:${registry.vaultReadOnly || g.readOnly ? 'read' : 'write'}`,
  );
}

/** Whether this process can serve a vault (its root opens here); a vault added elsewhere is opened now. */
async function canServeVault(host: Host, id: number): Promise<boolean> {
  if (!host.vaults.get(id)) {
    const row = (await listVaults(host.database.db)).find((r) => r.id === id);
    if (!row) return false;
    await host.vaults.serve(row);
  }
  return host.vaults.canServe(id);
}

/** Wait (bounded) until no write call is in flight on a vault here: a vault handed back finishes its writes first. */
async function drainWrites(host: Host, id: number): Promise<void> {
  const deadline = Date.now() + HANDBACK_DRAIN_MS;
  while (host.writeCalls.inFlight(id) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

/** The lease of a vault was won or lost: start its pipeline here, or stop it and hold the vault on standby. */
async function vaultOwnershipChanged(host: Host, id: number, owned: boolean): Promise<void> {
  // Another process records and announces this vault's changes from now on: end what listens here.
  if (!owned) await host.hub.closeVault(id);
  if (host.isClosed) return host.vaults.stop(id);
  // The database may be what went away (a restart took the lease): the row this process holds will do.
  const rows = await listVaults(host.database.db).catch(() => []);
  const row = rows.find((r) => r.id === id) ?? host.vaults.get(id)?.row;
  if (!row) return;
  const entry = await host.vaults.serve(row, {
    // A lost lease always stops the pipeline, even if the vault was won back meanwhile: the new one
    // starts with a scan under the new epoch, so nothing the old one could not commit is dropped.
    restart: !owned,
    prepare:
      owned && id === host.defaultVaultId && !host.settings.host.vault.readOnly
        ? (fs) => seedWelcomeNote(fs, host.log)
        : undefined,
  });
  if (owned && entry.state !== 'serving') throw new Error(entry.reason ?? 'the vault cannot be served here');
}
