// /health: the database, each family's state and counts per vault, the vaults, the audit queue, workers,
// the index and (several processes on one server) the leases. Every family's own counts are read at once,
// each bounded by a short deadline; messages lose their absolute paths before they are shown.
import type { HealthBacklog } from '../sdk/define-family.js';
import type { VaultLeases } from './cluster/leases.js';
import type { Host } from './host.js';
import type { HostMetrics } from './metrics/index.js';
import { PACKAGE_VERSION } from './package-info.js';

export async function hostHealth(host: Host): Promise<Record<string, unknown>> {
  const dbOk = await host.database.ping();
  const families: Record<string, string> = {};
  const reasons: Record<string, string> = {};
  let degraded = false;
  for (const [name, st] of host.manager.registry.status) {
    families[name] = st.state;
    if (st.reason) reasons[name] = redact(st.reason);
    if (st.state === 'failed' || st.state === 'unavailable' || st.reason) degraded = true;
  }
  const last = host.manager.lastResult;
  if (last && !last.ok) degraded = true;
  const caps = host.vaultHandle.fs.capabilities;
  const byVault = await host.familyHealthByVault();
  const familyHealth = byVault[host.vaultHandle.name] ?? {};
  const vaults = host.vaults.health();
  for (const v of Object.values(vaults)) if (v.state === 'unavailable') degraded = true;
  const owners = host.leases ? await host.leases.ownersByVault().catch(() => undefined) : undefined;
  return {
    status: !dbOk ? 'down' : degraded ? 'degraded' : 'ok',
    version: PACKAGE_VERSION,
    uptimeSeconds: Math.round((Date.now() - host.startedAt) / 1000),
    db: dbOk ? 'ok' : 'down',
    engine: host.database.engine.kind,
    families,
    ...(Object.keys(reasons).length ? { familyReasons: reasons } : {}),
    tools: host.manager.registry.listTools(host.operator).length,
    ...(Object.keys(familyHealth).length ? { familyHealth } : {}),
    sessions: host.hub.size,
    reload: last ? { ok: last.ok, at: last.at, errors: last.errors.map(redact) } : null,
    vault: { engine: caps.engine, namedStaging: caps.namedStaging },
    audit: { pending: host.audit.pending, written: host.audit.written, dropped: host.audit.dropped },
    workers: host.workers.stats(),
    index: host.index?.healthSummary() ?? null,
    ...(host.leases
      ? {
          cluster: {
            process: host.leases.processId,
            owned: host.leases.ownedVaults().length,
            leases: host.leases.counters,
            forwards: host.forwarder?.counts ?? null,
          },
        }
      : {}),
    vaults: Object.fromEntries(
      Object.entries(vaults).map(([name, v]) => [
        name,
        {
          ...v,
          ...(byVault[name] && Object.keys(byVault[name]).length ? { familyHealth: byVault[name] } : {}),
          ...(v.reason ? { reason: redact(v.reason) } : {}),
          ...(v.lastError ? { lastError: redact(v.lastError) } : {}),
          ...(owners
            ? ownerFields(owners, host.leases!, host.vaults.all().find((e) => e.row.name === name)?.row.id)
            : {}),
        },
      ]),
    ),
  };
}

/**
 * Each serving family's own counts (its `health` hook) for every served vault, by vault name then
 * family; each call bounded by a short deadline (all run at once). One read serves a whole /health
 * answer or /metrics scrape.
 */
export async function familyHealthByVault(host: Host): Promise<Record<string, Record<string, unknown>>> {
  const gens = [...host.manager.registry.generations.values()].filter((g) => g.family.health);
  const vaults = new Map<number, string>([[host.vaultHandle.id, host.vaultHandle.name]]);
  for (const v of host.vaults.all()) if (v.handle) vaults.set(v.row.id, v.row.name);
  const out: Record<string, Record<string, unknown>> = {};
  for (const name of vaults.values()) out[name] = {};
  await Promise.all(
    [...vaults].flatMap(([vaultId, vaultName]) =>
      gens.map(async (g) => {
        const ctx = { vaultId, db: host.database.db, ...g.services() };
        const timeout = new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error('timeout')), FAMILY_HEALTH_TIMEOUT_MS).unref(),
        );
        try {
          out[vaultName][g.name] = await Promise.race([g.family.health!(ctx), timeout]);
        } catch {
          out[vaultName][g.name] = { error: 'unavailable' };
        }
      }),
    ),
  );
  return out;
}

/** The backlogs serving families declare (`healthBacklog`): which health fields to sum, per family. */
export function healthBacklogs(host: Host): Array<HealthBacklog & { family: string }> {
  return [...host.manager.registry.generations.values()].flatMap((g) =>
    g.family.healthBacklog ? [{ family: g.name, ...g.family.healthBacklog }] : [],
  );
}

/** A vault's owner process (by its lease) and the epoch under which this process owns it (null: it does not). */
function ownerFields(
  owners: ReadonlyMap<number, { owner: string }>,
  leases: VaultLeases,
  id: number | undefined,
): { owner: string | null; leaseEpoch: number | null } {
  return { owner: owners.get(id ?? -1)?.owner ?? null, leaseEpoch: leases.epoch(id ?? -1) ?? null };
}

/** How long /health waits for one family's counts. */
const FAMILY_HEALTH_TIMEOUT_MS = 1000;

/** Strip absolute paths from messages shown on /health. */
function redact(text: string): string {
  return text.replace(/(?:file:\/\/)?\/[^\s'",;)]+/g, '<path>');
}

/** Prometheus metrics over the host's parts (metrics.enabled; the module is loaded only then). */
export function hostMetrics(host: Host, module: typeof import('./metrics/index.js')): HostMetrics {
  const leases = host.leases;
  const metrics = new module.HostMetrics({
    sessions: () => host.hub.size,
    subscriptions: () => host.subscriptions.count(),
    listenStreams: () => host.hub.streamCount,
    vaults: () => host.vaults.health(),
    workers: () => host.workers.stats(),
    audit: () => ({ pending: host.audit.pending, written: host.audit.written, dropped: host.audit.dropped }),
    pool: () => host.database.pool.counts(),
    familyHealth: () => host.familyHealthByVault(),
    backlogs: () => host.healthBacklogs(),
    leases: leases ? () => ({ owned: leases.ownedVaults().length, ...leases.counters }) : undefined,
  });
  host.database.pool.onWait = (seconds) => metrics.poolWait(seconds);
  host.dispatcher.onCall = (tool, seconds, outcome, code) => metrics.toolCall(tool, seconds, outcome, code);
  return metrics;
}
