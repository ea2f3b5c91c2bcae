// Several `exocortex serve` processes on one PostgreSQL 15 server (fsync on) behind HAProxy (Debian's),
// with writers of both protocol eras (2025 sessions, 2026-07-28 stateless clients), listen streams
// (subscriptions/listen on vault://changes, resumed by get_changes cursors), an outside editor and faults
// while they run: kill -9 of a busy vault's owner, the termination of an owner's lease connection only
// (its pool stays up: the fence must hold), SIGSTOP of an owner, a PostgreSQL restart, and kill -9 of a
// forwarding process holding a listen stream. Oracles after quiescence: every file is its last
// acknowledged write, exactly one change event per acknowledged write and per outside edit, the index
// equals the files, every change event reached each listener (stream or resume, no gap), lease epochs
// only grow and sampled ownership intervals never overlap, every vault owned by exactly one live process;
// plus a multi-round-trip request whose rounds reach different processes, per-user limits across
// processes (a failover's excess printed), revocation everywhere, a read-only deployment that cannot
// widen a key, and a forged hop refused.
import t from 'tap';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { revokeApiKey } from '../../../src/host/auth/api-keys.js';
import { haproxyAvailable, startCluster, type TestCluster } from '../../../src/host/testing/cluster.js';
import { postgresAvailable, startPostgres } from '../../../src/host/testing/postgres-server.js';

// Runs on demand (EXOCORTEX_CLUSTER_FAULTS=extended) until it has passed run after run; replicas.test.ts
// (kill -9, a cut lease connection, SIGSTOP) runs in CI.
const skip =
  process.env.EXOCORTEX_CLUSTER_FAULTS !== 'extended'
    ? 'the extended fault run (PostgreSQL restart, a forwarder killed under a listen stream, listeners) is not yet reliable (issue 37): EXOCORTEX_CLUSTER_FAULTS=extended runs it'
    : !postgresAvailable()
      ? 'PostgreSQL 15 server binaries not installed'
      : !haproxyAvailable()
        ? 'HAProxy not installed (.ci/run installs Debian haproxy)'
        : false;

const here = path.dirname(fileURLToPath(import.meta.url));
const sha = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// Minutes of faults and quiescence: past tap's default per-file limit.
t.setTimeout(1_500_000);

t.test('three processes, one PostgreSQL, HAProxy in front: faults lose nothing', { skip }, async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-replicas-'));
  const pg = await startPostgres({ durable: true });
  let cluster: TestCluster | undefined;
  // Workload loops stop before anything is torn down (also when an assertion threw midway).
  const stops: Array<() => void> = [];
  t.teardown(async () => {
    for (const stop of stops) stop();
    await Promise.race([cluster?.close(), sleep(30_000)]);
    // A failed run keeps the processes' and the server's logs for the reader.
    if (!t.passing()) {
      const keep = mkdtempSync(path.join(os.tmpdir(), 'exo-replicas-logs-'));
      for (const f of readdirSync(dir)) if (f.endsWith('.log')) cpSync(path.join(dir, f), path.join(keep, f));
      cpSync(path.join(pg.dir, 'pg.log'), path.join(keep, 'pg.log'));
      console.error(`# replicas: logs kept in ${keep}`);
    }
    pg.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  cluster = await startCluster({
    dir,
    databaseUrl: pg.url,
    processes: 3,
    vaults: 6,
    balancer: true,
    config: {
      cluster: { leaseIntervalMs: 300 },
      log: { level: 'info' },
      metrics: { enabled: true, allowLoopback: true },
      // The conformance fixture family: its multi-round-trip tool seals requestState with the shared key.
      plugins: [path.resolve(here, '../../fixtures/families/conformance')],
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
  const lb = c.balancer!;

  // Ownership settles: every vault (the operator's too) owned by exactly one live process.
  const allVaults = (await c.db.db.selectFrom('vaults').select('id').execute()).map((r) => r.id);
  const ownedBy = async () => {
    const rows = await sql<{ objid: number; pid: number }>`
      SELECT objid::int, pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2
        AND classid = ${0x45786f31}::oid`.execute(c.db.db);
    return rows.rows;
  };
  let locks = await ownedBy();
  for (let i = 0; i < 50 && locks.length < allVaults.length; i++) {
    await sleep(200);
    locks = await ownedBy();
  }
  t.same(
    locks.map((l) => l.objid).sort((a, b) => a - b),
    [...allVaults].sort((a, b) => a - b),
    'each vault has exactly one lease holder',
  );
  const epochsBefore = new Map(
    (await c.db.db.selectFrom('vault_leases').select(['vault_id', 'epoch']).execute()).map((r) => [
      r.vault_id,
      Number(r.epoch),
    ]),
  );

  // A 2026-07-28 client (stateless: every request stands alone, whichever process it reaches).
  const modernClients: ClientV2[] = [];
  const connectModern = async (base: string, key: string) => {
    const client = new ClientV2(
      { name: 'cluster-modern', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    // A client's own deadline for the version probe (the default is 60 s): a probe lost with a dying
    // process is given up and sent again, as a client that keeps serving would.
    await client.connect(
      new HttpV2(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }),
      { timeout: 15_000 },
    );
    modernClients.push(client);
    return client;
  };
  // Bounded: a client of a process killed mid-stream must not hold the teardown.
  t.teardown(() =>
    Promise.race([Promise.all(modernClients.map((m) => m.close().catch(() => undefined))), sleep(5000)]),
  );

  // Lease sampler: every 100 ms, each vault's epoch, its recorded owner and the lock holder's process.
  // Per vault, epochs must only grow, the lock holder must be the epoch's owner, and the sampled interval
  // of an epoch must end before the next epoch's begins (owners' intervals never overlap).
  const intervals = new Map<number, Array<{ epoch: number; owner: string; first: number; last: number }>>();
  const leaseProblems: string[] = [];
  const mismatchSince = new Map<number, { key: string; since: number }>();
  const reported = new Set<string>();
  let sampling = true;
  stops.push(() => {
    sampling = false;
  });
  const sampler = (async () => {
    while (sampling) {
      try {
        const rows = await sql<{ vault_id: number; epoch: string; owner: string; holder: string | null }>`
          SELECT l.vault_id, l.epoch, l.owner, a.application_name AS holder FROM vault_leases l
          LEFT JOIN pg_locks k ON k.locktype = 'advisory' AND k.granted AND k.objsubid = 2
            AND k.classid = ${0x45786f31}::oid AND k.objid = l.vault_id::oid
          LEFT JOIN pg_stat_activity a ON a.pid = k.pid`.execute(c.db.db);
        const now = Date.now();
        for (const r of rows.rows) {
          if (r.holder === null) continue; // no owner now (a failover in progress)
          const epoch = Number(r.epoch);
          // A bid takes the lock first and bumps the epoch after (waiting for the old owner's commit in
          // flight), so the two disagree for a moment: only a disagreement that lasts is a problem.
          const key = `${r.vault_id}/${epoch}/${r.holder}`;
          if (!r.holder.endsWith(r.owner.slice(0, 40))) {
            const seen = mismatchSince.get(r.vault_id);
            const since = seen?.key === key ? seen.since : now;
            mismatchSince.set(r.vault_id, { key, since });
            if (now - since > 5000 && !reported.has(key)) {
              reported.add(key);
              leaseProblems.push(
                `vault ${r.vault_id} epoch ${epoch}: lock held by ${r.holder}, owner ${r.owner} for 5 s`,
              );
            }
          } else mismatchSince.delete(r.vault_id);
          let list = intervals.get(r.vault_id);
          if (!list) intervals.set(r.vault_id, (list = []));
          const last = list.at(-1);
          if (last?.epoch === epoch) last.last = now;
          else if (last && epoch < last.epoch)
            leaseProblems.push(`vault ${r.vault_id}: epoch went back from ${last.epoch} to ${epoch}`);
          else list.push({ epoch, owner: r.owner, first: now, last: now });
        }
      } catch {
        // the database is restarting
      }
      await sleep(100);
    }
  })();

  // Listeners: 2026-07-28 clients holding subscriptions/listen on vault://changes, opened through the
  // balancer (so often at a non-owner, which forwards the stream). Each notification makes the client
  // read get_changes from its cursor; a stream that ends is reopened through the balancer and the client
  // resumes from its cursor. Every event of the vault must reach it one way or the other; no final sweep.
  // What the writers and listeners saw, with times (and, when a listener missed events, the database's
  // sessions and the processes' pool and lease metrics): kept beside the logs of a failed run.
  const trail: string[] = [];
  t.teardown(() => {
    if (t.passing()) return;
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'exo-replicas-trail-')), 'trail.txt');
    writeFileSync(file, trail.join('\n'));
    console.error(`# replicas: what the clients saw in ${file}`);
  });
  interface Listener {
    readonly vault: (typeof c.vaults)[number];
    readonly label: string;
    readonly seen: Set<number>;
    cursor: string;
    delivered: number;
    notifications: number;
    ends: string[];
    reopened: number;
    lastError?: string;
    /** Resolves when the stream now open ends (for the forwarder-kill fault). */
    ended?: Promise<string>;
    openedAt: number;
  }
  let listening = true;
  stops.push(() => {
    listening = false;
  });
  let stopListeningNow!: () => void;
  const stopListening = new Promise<void>((r) => {
    stopListeningNow = r;
  });
  const listeners: Listener[] = [];
  const listen = (vault: (typeof c.vaults)[number], label: string, firstBase = lb) => {
    const l: Listener = {
      vault,
      label,
      seen: new Set(),
      cursor: 'ev:0',
      delivered: 0,
      notifications: 0,
      ends: [],
      reopened: 0,
      openedAt: 0,
    };
    listeners.push(l);
    let reading: Promise<void> = Promise.resolve();
    let reader: ClientV2 | undefined;
    // As a paging client does: a page that timed out is asked for again smaller, and retries back off.
    let page = 100;
    // Read every event after the cursor (serialised: a notification during a read reads again after it).
    const catchUp = () => {
      reading = reading.then(async () => {
        for (let attempt = 0; listening || attempt === 0; attempt++) {
          try {
            reader ??= await connectModern(lb, vault.key);
            for (;;) {
              const asked = Date.now();
              const r = await reader.callTool(
                { name: 'get_changes', arguments: { since: l.cursor, limit: page } },
                {
                  timeout: 15_000,
                },
              );
              if (Date.now() - asked > 5000)
                trail.push(
                  `${new Date().toISOString()} listener ${l.label} read of ${page} took ${Date.now() - asked} ms`,
                );
              page = Math.min(100, page * 2);
              const out = r.structuredContent as
                | { events: Array<{ seq: number }>; next_since: string; more: boolean }
                | undefined;
              if (r.isError || !out) throw new Error(JSON.stringify(r.content).slice(0, 200));
              for (const e of out.events) {
                l.delivered++;
                l.seen.add(e.seq);
              }
              l.cursor = out.next_since;
              if (!out.more) return;
            }
          } catch (e) {
            // A fresh client for the next try (one whose request was cut by a dying process may be spent).
            l.lastError = String(e).slice(0, 200);
            trail.push(`${new Date().toISOString()} listener ${l.label} read threw ${l.lastError}`);
            reader = undefined;
            page = Math.max(10, Math.floor(page / 2));
            await sleep(Math.min(2000, 200 * (attempt + 1)));
          }
        }
      });
      return reading;
    };
    const run = async () => {
      let base = firstBase;
      while (listening) {
        try {
          const client = await connectModern(base, vault.key);
          base = lb;
          client.setNotificationHandler('notifications/resources/updated', (n) => {
            if (n.params.uri !== 'vault://changes') return;
            l.notifications++;
            void catchUp();
          });
          const sub = await client.listen({ resourceSubscriptions: ['vault://changes'] });
          l.openedAt = Date.now();
          l.ended = sub.closed;
          // Resume: whatever happened while no stream was open is read from the cursor.
          void catchUp();
          const why = await Promise.race([sub.closed, stopListening.then(() => 'stopped' as const)]);
          if (why === 'stopped') {
            await Promise.race([sub.close().catch(() => undefined), sleep(3000)]);
            return;
          }
          l.ends.push(why);
          trail.push(`${new Date().toISOString()} listener ${l.label} stream ended ${why}`);
          l.reopened++;
        } catch (e) {
          trail.push(`${new Date().toISOString()} listener ${l.label} open threw ${String(e).slice(0, 200)}`);
          await sleep(200);
        }
      }
    };
    const done = run();
    return { l, done: () => done.then(() => reading) };
  };
  // The faulted vaults (v01: kill -9 of its owner, v02: lease connection cut, v03: SIGSTOP) and v04.
  const listenRuns = c.vaults.slice(0, 4).map((v) => listen(v, `${v.name} via the balancer`));

  // Writers through the balancer: one path per write, each acknowledged (path, hash) logged. v01 and v03
  // write over 2025 sessions (Mcp-Session-Id, held by the owner), v02 and v04 as 2026-07-28 clients.
  const acked = new Map<string, Map<string, string>>();
  const failures: string[] = [];
  const lastError = new Map<string, string>();
  let writing = true;
  stops.push(() => {
    writing = false;
  });
  const eras = new Map<string, { calls: number; acked: number }>([
    ['2025', { calls: 0, acked: 0 }],
    ['2026-07-28', { calls: 0, acked: 0 }],
  ]);
  const writers = c.vaults.slice(0, 4).map(async (v, n) => {
    const mine = new Map<string, string>();
    acked.set(v.name, mine);
    const era = eras.get(n % 2 === 0 ? '2025' : '2026-07-28')!;
    type Caller = { callTool: (p: { name: string; arguments: Record<string, unknown> }) => Promise<unknown> };
    const reconnect = async (): Promise<Caller> => {
      for (;;) {
        try {
          if (n % 2 === 0) {
            const old = await c.connect(lb, v.key, `writer-${v.name}`);
            return { callTool: (p) => old.callTool(p, undefined, { timeout: 5000 }) };
          }
          const modern = await connectModern(lb, v.key);
          return { callTool: (p) => modern.callTool(p, { timeout: 5000 }) };
        } catch (e) {
          lastError.set(v.name, String(e).slice(0, 300));
          trail.push(`${new Date().toISOString()} ${v.name} reconnect threw ${String(e).slice(0, 200)}`);
          await sleep(100);
        }
      }
    };
    let client = await reconnect();
    for (let i = 0; writing; i++) {
      const p = `w/${v.name}-${i}.md`;
      const content = `# ${v.name} ${i}\n\nwritten by the writer at ${Date.now()}\n`;
      for (let attempt = 0; writing || attempt === 0; attempt++) {
        try {
          // A client's own deadline: a call cut off by its owner's death may never be answered.
          era.calls++;
          const r = (await client.callTool({ name: 'create_note', arguments: { path: p, content } })) as {
            isError?: boolean;
            structuredContent?: { content_hash?: string };
            content: unknown;
          };
          const out = r.structuredContent;
          if (!r.isError && out?.content_hash) {
            era.acked++;
            mine.set(p, out.content_hash);
            await sleep(200); // about 5 writes a second per vault: 20 a second in all, within two cores
            break;
          }
          const text = JSON.stringify(r.content);
          lastError.set(v.name, text.slice(0, 300));
          trail.push(`${new Date().toISOString()} ${v.name} refused ${text.slice(0, 200)}`);
          // A retry of a create that landed before its answer was lost: the file holds our content.
          if (/already_exists/.test(text)) {
            const disk = readFileSync(path.join(v.root, p), 'utf8');
            if (disk === content) mine.set(p, sha(content));
            else failures.push(`${p}: exists with other content`);
            break;
          }
        } catch (e) {
          lastError.set(v.name, String(e).slice(0, 300));
          trail.push(`${new Date().toISOString()} ${v.name} threw ${String(e).slice(0, 200)}`);
          // The process holding the stream died; the next attempt reconnects through the balancer.
          client = await reconnect();
        }
        await sleep(100);
      }
    }
  });
  // An outside editor writes files straight into two vaults.
  for (const v of c.vaults.slice(0, 2)) mkdirSync(path.join(v.root, 'outside'), { recursive: true });
  const outside: Array<{ vault: string; path: string; content: string }> = [];
  const editor = (async () => {
    for (let i = 0; writing; i++) {
      const v = c.vaults[i % 2];
      const p = `outside/edit-${i}.md`;
      const content = `outside edit ${i}\n`;
      writeFileSync(path.join(v.root, 'outside', p.slice('outside/'.length)), content, { flag: 'w' });
      outside.push({ vault: v.name, path: p, content });
      await sleep(250);
    }
  })();
  await sleep(2000);

  // K1: kill -9 of a busy vault's owner; the failover is the time to the next acknowledged write there.
  const victimVault = c.vaults[0];
  const victim = await c.ownerOf(victimVault.id);
  t.ok(victim, 'the busy vault has a live owner');
  const before = acked.get(victimVault.name)!.size;
  const killedAt = Date.now();
  victim!.kill('SIGKILL');
  let failoverMs = -1;
  while (Date.now() - killedAt < 30_000) {
    if (acked.get(victimVault.name)!.size > before) {
      failoverMs = Date.now() - killedAt;
      break;
    }
    await sleep(20);
  }
  t.ok(failoverMs >= 0, `writes resumed after kill -9 (failover ${failoverMs} ms)`);
  t.comment(`failover after kill -9: ${failoverMs} ms`);

  // K3: terminate only the lease connection of another vault's owner; its pool stays up.
  const fencedVault = c.vaults[1];
  const fencedOwner = await c.ownerOf(fencedVault.id);
  t.ok(fencedOwner, 'the second vault has a live owner');
  const terminated = await sql<{ n: number }>`
    SELECT count(pg_terminate_backend(a.pid))::int AS n FROM pg_stat_activity a
    JOIN pg_locks k ON k.pid = a.pid AND k.locktype = 'advisory' AND k.granted AND k.objsubid = 2
      AND k.classid = ${0x45786f31}::oid AND k.objid = ${fencedVault.id}::oid`.execute(c.db.db);
  t.equal(terminated.rows[0].n, 1, 'the lease connection of the owner was terminated');
  await sleep(2000);

  // K2: SIGSTOP of an owner for a few seconds: its vaults stall (no split brain), then carry on.
  const stoppedVault = c.vaults[2];
  const stopped = await c.ownerOf(stoppedVault.id);
  if (stopped && stopped !== fencedOwner) {
    stopped.kill('SIGSTOP');
    await sleep(4000);
    stopped.kill('SIGCONT');
  }
  // The killed process comes back (before the restart: a process cannot start without its database).
  await victim!.start();

  // K4: a PostgreSQL restart while writers run: a crash stop (-m immediate), 1 s down, crash recovery.
  // Every connection of every process dies: leases, pools, LISTEN. Afterwards every vault must be owned
  // again under a new epoch and every writer's vault must acknowledge writes again.
  const epochsOf = async () =>
    new Map(
      (await c.db.db.selectFrom('vault_leases').select(['vault_id', 'epoch']).execute()).map((r) => [
        r.vault_id,
        Number(r.epoch),
      ]),
    );
  const epochsBeforeRestart = await epochsOf();
  const restartAt = Date.now();
  trail.push(`${new Date().toISOString()} PG restart begins`);
  await pg.restart(1000);
  const pgBackMs = Date.now() - restartAt;
  const ackedAtRestart = new Map([...acked].map(([k, m]) => [k, m.size]));
  const servedAgain = new Map<string, number>();
  let ownedAgainMs = -1;
  while (Date.now() - restartAt < 60_000 && (servedAgain.size < acked.size || ownedAgainMs < 0)) {
    for (const [name, m] of acked)
      if (!servedAgain.has(name) && m.size > ackedAtRestart.get(name)!) servedAgain.set(name, Date.now() - restartAt);
    if (ownedAgainMs < 0) {
      const held = await ownedBy().catch(() => []);
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
    [...acked.keys()].filter((k) => !servedAgain.has(k)),
    [],
    'every writer’s vault acknowledges writes again after the PostgreSQL restart',
  );
  const epochsAfterRestart = await epochsOf();
  t.same(
    allVaults.filter((id) => !(epochsAfterRestart.get(id)! > epochsBeforeRestart.get(id)!)),
    [],
    'every vault was taken over under a new epoch after the restart',
  );

  // K5: kill -9 of a forwarding process holding a listen stream. A listener of v04 opens its stream at a
  // process that does not own v04 (so the stream is forwarded to the owner); that process dies. The
  // client must see the stream end (not hang), reopen it through the balancer and resume from its cursor.
  const hopVault = c.vaults[3];
  // Ownership may still settle after the restart (shares rebalance): wait for a stable owner.
  let hopOwner = await c.ownerOf(hopVault.id);
  for (let i = 0; i < 100 && !hopOwner; i++) {
    await sleep(100);
    hopOwner = await c.ownerOf(hopVault.id);
  }
  const forwarder = c.processes.find((p) => !p.exited && p !== hopOwner);
  t.ok(hopOwner && forwarder, 'v04 has an owner and another live process forwards to it');
  const hopRun = listen(hopVault, 'v04 opened at a forwarder, reopened via the balancer', forwarder!.url);
  listenRuns.push(hopRun);
  const hop = hopRun.l;
  for (let i = 0; i < 150 && !hop.ended; i++) await sleep(100);
  t.ok(hop.ended, 'the listen stream opened at the forwarder is acknowledged');
  t.not(await c.ownerOf(hopVault.id), forwarder, 'the process holding the stream does not own v04 (it forwards)');
  const hopKilledAt = Date.now();
  forwarder!.kill('SIGKILL');
  const endedAs = await Promise.race([hop.ended!, sleep(15_000).then(() => 'still open after 15 s')]);
  const hopEndMs = Date.now() - hopKilledAt;
  t.ok(['remote', 'graceful'].includes(endedAs), `the client sees its stream end (${endedAs}, ${hopEndMs} ms)`);
  while (Date.now() - hopKilledAt < 20_000 && hop.openedAt < hopKilledAt) await sleep(50);
  t.ok(
    hop.openedAt > hopKilledAt,
    `the listener reopened its stream through the balancer (${hop.openedAt - hopKilledAt} ms)`,
  );
  const forwarderBack = forwarder!.start();
  await forwarderBack;
  await sleep(2000);
  writing = false;
  await Promise.all([...writers, editor]);
  t.same(failures, [], 'no write landed with content other than its own');
  for (const [name, text] of lastError) t.comment(`${name}: last refusal or error seen by its writer: ${text}`);

  // Quiescence: every vault's index catches up with its files.
  const filesOf = (root: string) => {
    const out = new Map<string, string>();
    const walk = (rel: string) => {
      for (const e of readdirSync(path.join(root, rel), { withFileTypes: true })) {
        if (e.name.startsWith('.')) continue;
        const r = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) walk(r);
        else if (e.name.endsWith('.md')) out.set(r, sha(readFileSync(path.join(root, r), 'utf8')));
      }
    };
    walk('');
    return out;
  };
  const indexOf = async (vaultId: number) =>
    new Map(
      (
        await c.db.db.selectFrom('notes').select(['path', 'content_hash']).where('vault_id', '=', vaultId).execute()
      ).map((r) => [r.path as string, r.content_hash as string]),
    );
  for (const v of c.vaults) {
    let files = filesOf(v.root);
    let index = await indexOf(v.id);
    for (let i = 0; i < 150 && JSON.stringify([...files].sort()) !== JSON.stringify([...index].sort()); i++) {
      await sleep(200);
      files = filesOf(v.root);
      index = await indexOf(v.id);
    }
    t.same([...index].sort(), [...files].sort(), `${v.name}: the index equals the files`);
    const mine = acked.get(v.name);
    if (mine) {
      const wrong = [...mine].filter(([p, h]) => files.get(p) !== h);
      t.same(wrong, [], `${v.name}: every acknowledged write (${mine.size}) is on disk as acknowledged`);
    }
    const events = await c.db.db
      .selectFrom('change_events')
      .select(['path', 'kind'])
      .where('vault_id', '=', v.id)
      .where('kind', '=', 'created')
      .execute();
    const counts = new Map<string, number>();
    for (const e of events) counts.set(e.path, (counts.get(e.path) ?? 0) + 1);
    const expected = [...(mine?.keys() ?? []), ...outside.filter((o) => o.vault === v.name).map((o) => o.path)];
    const wrongCounts = expected.filter((p) => counts.get(p) !== 1).map((p) => `${p}: ${counts.get(p) ?? 0}`);
    const dup = [...counts].filter(([, n]) => n > 1);
    t.same(wrongCounts, [], `${v.name}: exactly one created event per acknowledged write and outside edit`);
    t.same(dup, [], `${v.name}: no duplicate created events`);
  }

  // Listeners: every change event of their vault reached them, over a stream or by resuming from their
  // cursor after reopening one. No final sweep: an event only counts if a notification or a resume read it.
  for (const l of listeners) {
    const all = async () =>
      (await c.db.db.selectFrom('change_events').select('seq').where('vault_id', '=', l.vault.id).execute()).map((r) =>
        Number(r.seq),
      );
    let seqs = await all();
    for (let i = 0; i < 100 && seqs.some((q) => !l.seen.has(q)); i++) {
      await sleep(100);
      seqs = await all();
    }
    const missing = seqs.filter((q) => !l.seen.has(q));
    if (missing.length) {
      const act = await sql<
        Record<string, unknown>
      >`SELECT pid, application_name AS app, state, wait_event_type AS wt, wait_event AS we,
        extract(epoch from now() - xact_start)::int AS xs, extract(epoch from now() - state_change)::int AS sc, left(query, 160) AS q
        FROM pg_stat_activity WHERE datname IS NOT NULL AND pid <> pg_backend_pid() ORDER BY xact_start NULLS LAST`.execute(
        c.db.db,
      );
      for (const r of act.rows) trail.push(`ACT ${JSON.stringify(r)}`);
      const waits = await sql<
        Record<string, unknown>
      >`SELECT pid, locktype, mode, relation::regclass::text AS rel, objid FROM pg_locks WHERE NOT granted`.execute(
        c.db.db,
      );
      for (const r of waits.rows) trail.push(`WAIT ${JSON.stringify(r)}`);
      for (const p of c.processes.filter((x) => !x.exited)) {
        const m = await fetch(`${p.url}/metrics`)
          .then((r) => r.text())
          .catch((e) => String(e));
        trail.push(
          `METRICS ${p.name} ${m
            .split('\n')
            .filter((x) => /pool|lease|forward/.test(x) && !x.startsWith('#'))
            .join(' | ')}`,
        );
      }
    }
    t.comment(
      `listener ${l.label}: ${seqs.length} events, ${l.notifications} notifications, ${l.delivered} delivered ` +
        `(${l.delivered - l.seen.size} duplicates before dedupe by id), stream ended ${l.ends.length} times (${l.ends.join(', ')})` +
        (l.lastError ? `; last read error: ${l.lastError}` : ''),
    );
    t.same(missing.slice(0, 20), [], `listener ${l.label}: no change event missed (${missing.length} missing)`);
    t.same(
      [...l.seen].filter((q) => !seqs.includes(q)),
      [],
      `listener ${l.label}: nothing delivered that is not an event of its vault`,
    );
  }
  listening = false;
  stopListeningNow();
  // Bounded: closing a stream sends a cancel that a busy process may answer late.
  await Promise.race([Promise.all(listenRuns.map((r) => r.done())), sleep(10_000)]);
  // The restart took every lease: no stream may stay open (and silent) at a process that lost its vault.
  t.same(
    listeners.filter((l) => l !== hop && l.ends.length === 0).map((l) => l.label),
    [],
    'every stream opened before the PostgreSQL restart was ended and reopened',
  );
  const epochsAfter = new Map(
    (await c.db.db.selectFrom('vault_leases').select(['vault_id', 'epoch']).execute()).map((r) => [
      r.vault_id,
      Number(r.epoch),
    ]),
  );
  t.ok(
    epochsAfter.get(victimVault.id)! > epochsBefore.get(victimVault.id)!,
    'the killed owner’s vault has a new epoch',
  );
  t.ok(epochsAfter.get(fencedVault.id)! > epochsBefore.get(fencedVault.id)!, 'the fenced vault has a new epoch');
  locks = await ownedBy();
  t.equal(new Set(locks.map((l) => l.objid)).size, locks.length, 'no vault has two lease holders');
  t.equal(locks.length, allVaults.length, 'every vault is owned again after the faults');
  sampling = false;
  await sampler;
  t.same(leaseProblems.slice(0, 10), [], 'sampled leases: epochs only grow, the lock holder is the epoch’s owner');
  for (const v of c.vaults.slice(0, 4)) {
    const list = intervals.get(v.id) ?? [];
    const overlaps = list.slice(1).filter((x, i) => x.first <= list[i].last);
    t.same(overlaps, [], `${v.name}: owners’ sampled intervals never overlap (${list.length} epochs seen)`);
  }
  t.comment(
    `writes by era: ${[...eras].map(([era, n]) => `${era}: ${n.acked} acknowledged of ${n.calls} calls`).join('; ')}`,
  );
  t.ok(
    [...eras.values()].every((n) => n.acked > 0),
    'writers of both protocol eras were acknowledged',
  );

  // A multi-round-trip request (2026-07-28) whose rounds reach three different processes: the sealed
  // requestState minted by one opens on the others (the key is in PostgreSQL).
  const mrtrVault = c.vaults[3];
  let rpcId = 100;
  const round = async (base: string, params: Record<string, unknown>) => {
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${mrtrVault.key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'test_input_required_result_multi_round',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: ++rpcId,
        method: 'tools/call',
        params: {
          name: 'test_input_required_result_multi_round',
          arguments: {},
          ...params,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
          },
        },
      }),
    });
    const text = await res.text();
    const json = text.trimStart().startsWith('{')
      ? text
      : (text
          .split('\n')
          .filter((x) => x.startsWith('data:'))
          .map((x) => x.slice(5).trim())
          .find((x) => x.includes(`"id":${rpcId}`)) ?? text);
    return JSON.parse(json) as {
      result?: { resultType?: string; requestState?: string; content?: Array<{ text: string }> };
      error?: unknown;
    };
  };
  const [pa, pb, pc] = c.processes.filter((p) => !p.exited);
  const r1 = await round(pa.url, {});
  t.equal(r1.result?.resultType, 'input_required', `round 1 at ${pa.name} asks for input`);
  const r2 = await round(pb.url, {
    requestState: r1.result?.requestState,
    inputResponses: { step1: { action: 'accept', content: { name: 'Ada' } } },
  });
  t.equal(
    r2.result?.resultType,
    'input_required',
    `round 2 at ${pb.name} opens round 1’s state (${JSON.stringify(r2.error ?? '')})`,
  );
  const r3 = await round(pc.url, {
    requestState: r2.result?.requestState,
    inputResponses: { step2: { action: 'accept', content: { color: 'green' } } },
  });
  t.match(
    r3.result?.content?.[0]?.text ?? JSON.stringify(r3),
    /Multi-round complete: Ada likes green/,
    `round 3 at ${pc.name} completes the exchange`,
  );
  const tampered = await round(pb.url, {
    requestState: `${r2.result?.requestState?.slice(0, -4)}AAAA`,
    inputResponses: { step2: { action: 'accept', content: { color: 'green' } } },
  });
  t.ok(tampered.error, 'a tampered requestState is refused on any process');

  // Per-user limits hold across processes: all of a user's calls reach the one owner.
  const limited = c.vaults[5];
  const clients = await Promise.all(c.processes.map((p) => c.connect(p.url, limited.key, 'limited')));
  let admitted = 0;
  let refused = 0;
  const windowStart = Date.now();
  for (let i = 0; i < 45; i++) {
    const r = await clients[i % clients.length].callTool({ name: 'list_notes', arguments: {} });
    if (r.isError && /rate_limited/.test(JSON.stringify(r.content))) refused++;
    else if (!r.isError) admitted++;
  }
  t.ok(admitted <= 20, `at most 20 of 45 calls a minute admitted over three processes (admitted ${admitted})`);
  t.ok(refused >= 25, `the rest refused as rate_limited (${refused})`);
  // A failover of the limited vault (its owner's lease connection cut): the bucket lived in the old
  // owner's memory, so the new owner starts with a full one. The excess over the limit is reported.
  const limitedEpoch = (await epochsOf()).get(limited.id)!;
  await sql`SELECT pg_terminate_backend(a.pid) FROM pg_stat_activity a
    JOIN pg_locks k ON k.pid = a.pid AND k.locktype = 'advisory' AND k.granted AND k.objsubid = 2
      AND k.classid = ${0x45786f31}::oid AND k.objid = ${limited.id}::oid`.execute(c.db.db);
  for (let i = 0; i < 100; i++) {
    if ((await epochsOf()).get(limited.id)! > limitedEpoch && (await c.ownerOf(limited.id))) break;
    await sleep(100);
  }
  // Sessions held by the old owner were closed with its lease: stateless 2026-07-28 clients now.
  const after = await Promise.all(c.processes.filter((p) => !p.exited).map((p) => connectModern(p.url, limited.key)));
  let afterFailover = 0;
  for (let i = 0; i < 45; i++) {
    const r = await after[i % after.length].callTool({ name: 'list_notes', arguments: {} }).catch(() => undefined);
    if (r && !r.isError) afterFailover++;
  }
  const windowS = (Date.now() - windowStart) / 1000;
  const allowed = 20 + Math.floor((windowS * 20) / 60);
  const excess = Math.max(0, admitted + afterFailover - allowed);
  t.comment(
    `rate limit across a failover: ${admitted + afterFailover} calls admitted in ${windowS.toFixed(1)} s against ` +
      `a limit of 20 a minute (${allowed} with refill): a failover let ${excess} calls over the limit`,
  );
  t.ok(excess <= 20, `one failover exceeds the limit by at most one bucket (excess ${excess})`);

  // Revocation is refused by every process within moments.
  const revokedVault = c.vaults[4];
  const probe = async (base: string) => {
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${revokedVault.key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    await res.body?.cancel();
    return res.status;
  };
  for (const p of c.processes) t.not(await probe(p.url), 401, `${p.name} serves the key before revocation`);
  const revokedAt = Date.now();
  t.equal((await revokeApiKey(c.db.db, `key-${revokedVault.name}`)).length, 1);
  const latencies = await Promise.all(
    c.processes.map(async (p) => {
      while (Date.now() - revokedAt < 5000) if ((await probe(p.url)) === 401) return Date.now() - revokedAt;
      return -1;
    }),
  );
  t.ok(
    latencies.every((ms) => ms >= 0 && ms < 2500),
    `every process refuses the revoked key (${latencies.join(', ')} ms)`,
  );

  // A forged hop (no valid signature) is refused, never trusted.
  const forged = await fetch(`${c.processes[0].url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${c.vaults[3].key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'x-exocortex-hop': 'someone',
      'x-exocortex-ceiling': `${Date.now()} notes:write`,
      'x-exocortex-hop-signature': 'AAAA',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  await forged.body?.cancel();
  t.equal(forged.status, 403, 'a forged forwarding header is refused');

  // A read-only deployment owns nothing and cannot widen a key: write tools are absent and refused.
  const ro = await c.addProcess('ro', {
    cluster: { ownVaults: false, leaseIntervalMs: 300 },
    families: {
      notes: { enabled: true, readOnly: true },
      search: { enabled: true, readOnly: true },
      graph: { enabled: false },
      tasks: { enabled: false },
      files: { enabled: false },
      'change-feed': { enabled: false },
      transfer: { enabled: false },
      history: { enabled: false },
    },
  });
  const roClient = await c.connect(ro.url, c.vaults[3].key, 'read-only');
  const tools = (await roClient.listTools()).tools.map((x) => x.name);
  t.notOk(tools.includes('create_note'), 'no write tool is listed through the read-only deployment');
  t.notOk(tools.includes('get_backlinks'), 'no tool of a family the read-only deployment leaves off');
  t.ok(tools.includes('read_note'), 'read tools are listed');
  const roWrite = await roClient.callTool({ name: 'create_note', arguments: { path: 'ro.md', content: 'x' } });
  t.ok(roWrite.isError, 'a write through the read-only deployment is refused');
  const roRead = await roClient.callTool({
    name: 'read_note',
    arguments: { path: [...(acked.get(c.vaults[3].name)?.keys() ?? ['missing.md'])][0] },
  });
  t.notOk(roRead.isError, 'a read through the read-only deployment is answered by the owner');
  t.equal(await c.ownedBy(ro), 0, 'the read-only deployment owns no vault');
});
