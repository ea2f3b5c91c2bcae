// The replicas fault scenario, one module for the test files that run it (test/integration/cluster):
// three `exocortex serve` processes on one PostgreSQL 15 server (fsync on) behind HAProxy, writers of both
// protocol eras, an outside editor and listen streams, while faults strike: kill -9 of a busy vault's
// owner, the termination of an owner's lease connection only (its pool stays up: the fence must hold),
// SIGSTOP of an owner, and in the extended run a PostgreSQL restart and kill -9 of a forwarding process
// holding a listen stream. Then the oracles (replicas-oracles.ts, replicas-boundaries.ts). Loopback only.
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { haproxyAvailable, startCluster, type TestCluster } from './cluster.js';
import { postgresAvailable, startPostgres, type TestPostgres } from './postgres-server.js';
import {
  Listeners,
  ModernClients,
  sleep,
  startWorkload,
  type Listener,
  type Trail,
  type Workload,
} from './replicas-clients.js';
import {
  checkForgedHop,
  checkMultiRound,
  checkReadOnlyDeployment,
  checkRevocation,
  checkUserLimit,
} from './replicas-boundaries.js';
import {
  checkFilesIndexEvents,
  checkListeners,
  cutLease,
  epochsOf,
  leaseHolders,
  sampleLeases,
  type Checks,
  type LeaseSampler,
} from './replicas-oracles.js';

export type { Checks } from './replicas-oracles.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface ReplicasScenarioOptions {
  /**
   * Add the PostgreSQL restart and the death of a forwarding process holding a listen stream (K4, K5),
   * the multi-round-trip request across processes, and the rate limit across a failover.
   */
  readonly extended: boolean;
}

/** Why the scenario cannot run on this machine, or false. */
export function replicasSkip(): string | false {
  if (!postgresAvailable()) return 'PostgreSQL 15 server binaries not installed';
  if (!haproxyAvailable()) return 'HAProxy not installed (.ci/run installs Debian haproxy)';
  return false;
}

export async function runReplicasScenario(t: Checks, o: ReplicasScenarioOptions): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-replicas-'));
  const pg = await startPostgres({ durable: true });
  const trail: Trail = [];
  const modern = new ModernClients();
  let cluster: TestCluster | undefined;
  let listeners: Listeners | undefined;
  let work: Workload | undefined;
  let sampler: LeaseSampler | undefined;
  t.teardown(async () => {
    // Workload loops stop before anything is torn down (also when an assertion threw midway).
    sampler?.stop();
    listeners?.abandon();
    void work?.stop();
    await modern.close();
    await Promise.race([cluster?.close(), sleep(30_000)]);
    if (!t.passing()) keepForTheReader(dir, pg, trail);
    pg.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  cluster = await startCluster({
    dir,
    databaseUrl: pg.url,
    processes: 3,
    vaults: 6,
    balancer: true,
    typescriptFamilies: true, // the conformance fixture family below
    config: {
      cluster: { leaseIntervalMs: 300 },
      log: { level: 'info' },
      metrics: { enabled: true, allowLoopback: true },
      // The conformance fixture family: its multi-round-trip tool seals requestState with the shared key.
      plugins: [path.join(ROOT, 'test/fixtures/families/conformance')],
      admission: { writesPerMinute: 1000 },
      // v06's user: 20 calls a minute over all their credentials, whichever process they reach.
      users: [1, 2, 3, 4, 5, 6].map((i) => ({
        name: `u-v0${i}`,
        vault: `v0${i}`,
        ...(i === 6 ? { limits: { callsPerMinute: 20 } } : {}),
      })),
    },
  });
  const c = cluster;

  // Ownership settles: every vault (the operator's too) owned by exactly one live process.
  const allVaults = (await c.db.db.selectFrom('vaults').select('id').execute()).map((r) => r.id);
  let locks = await leaseHolders(c);
  for (let i = 0; i < 50 && locks.length < allVaults.length; i++) {
    await sleep(200);
    locks = await leaseHolders(c);
  }
  t.same(
    locks.map((l) => l.objid).sort((a, b) => a - b),
    [...allVaults].sort((a, b) => a - b),
    'each vault has exactly one lease holder',
  );
  const epochsBefore = await epochsOf(c);
  sampler = sampleLeases(c);
  const faulted = c.vaults.slice(0, 4);
  // The faulted vaults (v01: kill -9 of its owner, v02: lease connection cut, v03: SIGSTOP) and v04.
  listeners = new Listeners(c, modern, trail);
  for (const v of faulted) listeners.listen(v, `${v.name} via the balancer`);
  work = startWorkload(c, faulted, modern, trail);
  await sleep(2000);

  // K1: kill -9 of a busy vault's owner; the failover is the time to the next acknowledged write there.
  const victimVault = c.vaults[0];
  const victim = await c.ownerOf(victimVault.id);
  t.ok(victim, 'the busy vault has a live owner');
  const before = work.acked.get(victimVault.name)!.size;
  const killedAt = Date.now();
  victim!.kill('SIGKILL');
  let failoverMs = -1;
  while (Date.now() - killedAt < 30_000) {
    if (work.acked.get(victimVault.name)!.size > before) {
      failoverMs = Date.now() - killedAt;
      break;
    }
    await sleep(20);
  }
  t.ok(failoverMs >= 0, `writes resumed after kill -9 (failover ${failoverMs} ms)`);

  // K3: terminate only the lease connection of another vault's owner; its pool stays up. Its owner may be
  // between leases (the lease interval passes under load): wait for one.
  const fencedVault = c.vaults[1];
  let fencedOwner = await c.ownerOf(fencedVault.id);
  for (let i = 0; i < 100 && !fencedOwner; i++) {
    await sleep(100);
    fencedOwner = await c.ownerOf(fencedVault.id);
  }
  t.ok(fencedOwner, 'the second vault has a live owner');
  t.equal(await cutLease(c, fencedVault.id), 1, 'the lease connection of the owner was terminated');
  await sleep(2000);

  // K2: SIGSTOP of an owner for a few seconds: its vaults stall (no split brain), then carry on.
  const stopped = await c.ownerOf(c.vaults[2].id);
  if (stopped && stopped !== fencedOwner) {
    stopped.kill('SIGSTOP');
    await sleep(4000);
    stopped.kill('SIGCONT');
  }
  // The killed process comes back (before a restart: a process cannot start without its database).
  await victim!.start();
  let hop: Listener | undefined;
  if (o.extended) {
    await restartPostgres(t, c, pg, work, allVaults, trail);
    hop = await killForwarderUnderStream(t, c, listeners);
  } else await sleep(3000);
  await work.stop();
  t.same(work.failures, [], 'no write landed with content other than its own');
  for (const [name, text] of work.lastError) t.comment(`${name}: last refusal or error seen by its writer: ${text}`);

  await checkFilesIndexEvents(t, c, work);
  await checkListeners(t, c, listeners.all, trail);
  await listeners.stop();
  if (o.extended) {
    // The restart took every lease: no stream may stay open (and silent) at a process that lost its vault.
    t.same(
      listeners.all.filter((l) => l !== hop && l.ends.length === 0).map((l) => l.label),
      [],
      'every stream opened before the PostgreSQL restart was ended and reopened',
    );
  }
  const epochsAfter = await epochsOf(c);
  t.ok(
    epochsAfter.get(victimVault.id)! > epochsBefore.get(victimVault.id)!,
    'the killed owner’s vault has a new epoch',
  );
  t.ok(epochsAfter.get(fencedVault.id)! > epochsBefore.get(fencedVault.id)!, 'the fenced vault has a new epoch');
  locks = await leaseHolders(c);
  t.equal(new Set(locks.map((l) => l.objid)).size, locks.length, 'no vault has two lease holders');
  t.equal(locks.length, allVaults.length, 'every vault is owned again after the faults');
  await sampler.check(t, faulted);
  const eras = [...work.eras];
  t.comment(
    `writes by era: ${eras.map(([era, n]) => `${era}: ${n.acked} acknowledged of ${n.calls} calls`).join('; ')}`,
  );
  t.ok(
    eras.every(([, n]) => n.acked > 0),
    'writers of both protocol eras were acknowledged',
  );

  if (o.extended) await checkMultiRound(t, c, c.vaults[3]);
  await checkUserLimit(t, c, c.vaults[5], modern, o.extended);
  await checkRevocation(t, c, c.vaults[4]);
  await checkForgedHop(t, c, c.vaults[3]);
  const readable = [...(work.acked.get(c.vaults[3].name)?.keys() ?? ['missing.md'])][0];
  await checkReadOnlyDeployment(t, c, c.vaults[3], readable);
}

/**
 * K4: a PostgreSQL restart while writers run: a crash stop (-m immediate), 1 s down, crash recovery. Every
 * connection of every process dies: leases, pools, LISTEN. Afterwards every vault must be owned again under
 * a new epoch and every writer's vault must acknowledge writes again.
 */
async function restartPostgres(
  t: Checks,
  c: TestCluster,
  pg: TestPostgres,
  work: Workload,
  allVaults: readonly number[],
  trail: Trail,
): Promise<void> {
  const epochsBeforeRestart = await epochsOf(c);
  const restartAt = Date.now();
  trail.push(`${new Date().toISOString()} PG restart begins`);
  await pg.restart(1000);
  const pgBackMs = Date.now() - restartAt;
  const ackedAtRestart = new Map([...work.acked].map(([k, m]) => [k, m.size]));
  const servedAgain = new Map<string, number>();
  let ownedAgainMs = -1;
  while (Date.now() - restartAt < 60_000 && (servedAgain.size < work.acked.size || ownedAgainMs < 0)) {
    for (const [name, m] of work.acked)
      if (!servedAgain.has(name) && m.size > ackedAtRestart.get(name)!) servedAgain.set(name, Date.now() - restartAt);
    if (ownedAgainMs < 0) {
      const held = await leaseHolders(c).catch(() => []);
      if (new Set(held.map((l) => l.objid)).size === allVaults.length) ownedAgainMs = Date.now() - restartAt;
    }
    await sleep(50);
  }
  t.comment(
    `PostgreSQL restart: down and recovered in ${pgBackMs} ms; every vault owned again after ${ownedAgainMs} ms; ` +
      `writes acknowledged again after ${[...servedAgain].map(([k, ms]) => `${k} ${ms} ms`).join(', ')}`,
  );
  t.same(
    c.processes.filter((p) => p.exited).map((p) => p.name),
    [],
    'no process ended because its database restarted',
  );
  t.ok(ownedAgainMs >= 0, 'every vault has a lease holder again after the PostgreSQL restart');
  t.same(
    [...work.acked.keys()].filter((k) => !servedAgain.has(k)),
    [],
    'every writer’s vault acknowledges writes again after the PostgreSQL restart',
  );
  const epochsAfterRestart = await epochsOf(c);
  t.same(
    allVaults.filter((id) => !(epochsAfterRestart.get(id)! > epochsBeforeRestart.get(id)!)),
    [],
    'every vault was taken over under a new epoch after the restart',
  );
}

/**
 * K5: kill -9 of a forwarding process holding a listen stream. A listener of v04 opens its stream at a
 * process that does not own v04 (so the stream is forwarded to the owner); that process dies. The client
 * must see the stream end (not hang), reopen it through the balancer and resume from its cursor.
 */
async function killForwarderUnderStream(t: Checks, c: TestCluster, listeners: Listeners): Promise<Listener> {
  const hopVault = c.vaults[3];
  // Ownership may still settle after the restart (shares rebalance): wait for a stable owner.
  let hopOwner = await c.ownerOf(hopVault.id);
  for (let i = 0; i < 100 && !hopOwner; i++) {
    await sleep(100);
    hopOwner = await c.ownerOf(hopVault.id);
  }
  const forwarder = c.processes.find((p) => !p.exited && p !== hopOwner);
  t.ok(hopOwner && forwarder, 'v04 has an owner and another live process forwards to it');
  const hop = listeners.listen(hopVault, 'v04 opened at a forwarder, reopened via the balancer', forwarder!.url);
  for (let i = 0; i < 150 && !hop.ended; i++) await sleep(100);
  t.ok(hop.ended, 'the listen stream opened at the forwarder is acknowledged');
  t.not(await c.ownerOf(hopVault.id), forwarder, 'the process holding the stream does not own v04 (it forwards)');
  const killedAt = Date.now();
  forwarder!.kill('SIGKILL');
  const endedAs = await Promise.race([hop.ended!, sleep(15_000).then(() => 'still open after 15 s')]);
  const endMs = Date.now() - killedAt;
  t.ok(['remote', 'graceful'].includes(endedAs), `the client sees its stream end (${endedAs}, ${endMs} ms)`);
  while (Date.now() - killedAt < 20_000 && hop.openedAt < killedAt) await sleep(50);
  t.ok(
    hop.openedAt > killedAt,
    `the listener reopened its stream through the balancer (${hop.openedAt - killedAt} ms)`,
  );
  await forwarder!.start();
  await sleep(2000);
  return hop;
}

/** A failed run keeps the processes' and the server's logs and what the clients saw, for the reader. */
function keepForTheReader(dir: string, pg: TestPostgres, trail: Trail): void {
  const keep = mkdtempSync(path.join(os.tmpdir(), 'exo-replicas-logs-'));
  for (const f of readdirSync(dir)) if (f.endsWith('.log')) cpSync(path.join(dir, f), path.join(keep, f));
  cpSync(path.join(pg.dir, 'pg.log'), path.join(keep, 'pg.log'));
  writeFileSync(path.join(keep, 'trail.txt'), trail.join('\n'));
  console.error(`# replicas: logs and what the clients saw kept in ${keep}`);
}
