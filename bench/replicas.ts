// bench/replicas: several `exocortex serve` processes on one PostgreSQL 15 server (fsync on) behind
// HAProxy, as test/integration/cluster builds them. Prints:
// - failover after kill -9 of a busy vault's owner: kill → new lease (epoch bumped) → first acknowledged
//   write for that vault through the balancer, p50 and max over KILLS kills;
// - revocation latency: revoke → 401 on every process (each polled every 5 ms), p50/p99 over TRIALS;
// - forward cost: read_note through a process that does not own the vault against its owner directly,
//   added p50/p99 latency and the forwarder's CPU per call;
// - per process with 1, 2 and 3 processes: resident memory, owned vaults, and the server's connections.
// Throughput against process count is not printed: on two shared cores it says nothing about scaling.
// Usage: tsx bench/replicas.ts   Env: KILLS (default 5), TRIALS (default 20), CALLS (default 300)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { createApiKey, revokeApiKey } from '../src/host/auth/api-keys.js';
import { haproxyAvailable, startCluster, type TestCluster } from '../src/host/testing/cluster.js';
import { postgresAvailable, startPostgres } from '../src/host/testing/postgres-server.js';
import { cpuSeconds, machine, median, percentile } from './lib/setup.js';

const KILLS = Number(process.env.KILLS ?? 5);
const TRIALS = Number(process.env.TRIALS ?? 20);
const CALLS = Number(process.env.CALLS ?? 300);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms = (x: number) => `${x.toFixed(x < 10 ? 2 : 0)} ms`;

if (!postgresAvailable() || !haproxyAvailable()) {
  console.log('bench/replicas needs PostgreSQL 15 server binaries and HAProxy (apt-get install haproxy)');
  process.exit(0);
}

async function withCluster<T>(processes: number, fn: (c: TestCluster) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-bench-replicas-'));
  const pg = await startPostgres({ durable: true });
  const c = await startCluster({
    dir,
    databaseUrl: pg.url,
    processes,
    vaults: 6,
    balancer: true,
    config: { admission: { writesPerMinute: 6000, callsPerMinute: 60000 } },
  });
  try {
    return await fn(c);
  } finally {
    await c.close();
    pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

function cpuMs(pid: number): number {
  return cpuSeconds(pid) * 1000;
}

async function epochOf(c: TestCluster, vaultId: number): Promise<number> {
  const r = await c.db.db.selectFrom('vault_leases').select('epoch').where('vault_id', '=', vaultId).executeTakeFirst();
  return Number(r?.epoch ?? 0);
}

console.log(`bench/replicas on ${machine()}`);

await withCluster(3, async (c) => {
  await sleep(3000);
  // Failover after kill -9.
  const toLease: number[] = [];
  const toWrite: number[] = [];
  for (let k = 0; k < KILLS; k++) {
    const v = c.vaults[k % c.vaults.length];
    const owner = await c.ownerOf(v.id);
    if (!owner) continue;
    let client = await c.connect(c.balancer!, v.key, 'bench-writer');
    let acked = 0;
    let running = true;
    const writer = (async () => {
      for (let i = 0; running; i++) {
        try {
          const r = await client.callTool(
            { name: 'create_note', arguments: { path: `bench/${k}-${i}.md`, content: `bench ${k} ${i}\n` } },
            undefined,
            { timeout: 5000 },
          );
          if (!r.isError) acked++;
        } catch {
          client = await c.connect(c.balancer!, v.key, 'bench-writer').catch(() => client);
        }
        await sleep(20);
      }
    })();
    await sleep(1000);
    const epoch = await epochOf(c, v.id);
    const before = acked;
    const t0 = performance.now();
    owner.kill('SIGKILL');
    let leased = -1;
    while (performance.now() - t0 < 30_000) {
      if (leased < 0 && (await epochOf(c, v.id)) > epoch) leased = performance.now() - t0;
      if (acked > before) break;
      await sleep(5);
    }
    toWrite.push(performance.now() - t0);
    if (leased >= 0) toLease.push(leased);
    running = false;
    await writer;
    await owner.start();
    await sleep(2000);
  }
  console.log(
    `failover after kill -9 (${toWrite.length} kills): new lease p50 ${ms(median(toLease))}, max ${ms(Math.max(...toLease))}; first acknowledged write p50 ${ms(median(toWrite))}, max ${ms(Math.max(...toWrite))}`,
  );

  // Revocation latency across processes.
  const v = c.vaults[0];
  const user = await c.db.db
    .selectFrom('users')
    .select('id')
    .where('name', '=', `u-${v.name}`)
    .executeTakeFirstOrThrow();
  const latencies: number[] = [];
  for (let i = 0; i < TRIALS; i++) {
    const { raw } = await createApiKey(c.db.db, {
      name: `rev-${i}`,
      scope: 'read',
      vaultId: v.id,
      userId: Number(user.id),
    });
    const probe = async (base: string) => {
      const res = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${raw}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      });
      await res.body?.cancel();
      return res.status;
    };
    for (const p of c.processes) await probe(p.url);
    const t0 = performance.now();
    await revokeApiKey(c.db.db, `rev-${i}`);
    await Promise.all(
      c.processes.map(async (p) => {
        while (performance.now() - t0 < 10_000) {
          if ((await probe(p.url)) === 401) return latencies.push(performance.now() - t0);
          await sleep(5);
        }
      }),
    );
  }
  console.log(
    `revocation → 401 on each of ${c.processes.length} processes (${latencies.length} probes): p50 ${ms(median(latencies))}, p99 ${ms(percentile(latencies, 99))}`,
  );

  // Forward cost: the same read through the owner and through a process that forwards to it.
  const fv = c.vaults[1];
  const owner = await c.ownerOf(fv.id);
  const other = c.processes.find((p) => p !== owner && !p.exited)!;
  const direct = await c.connect(owner!.url, fv.key, 'bench-direct');
  const via = await c.connect(other.url, fv.key, 'bench-forwarded');
  await direct.callTool({ name: 'create_note', arguments: { path: 'forward.md', content: 'forward cost\n' } });
  const timesDirect: number[] = [];
  const timesVia: number[] = [];
  let cpuVia = 0;
  for (let i = 0; i < CALLS; i++) {
    let t0 = performance.now();
    await direct.callTool({ name: 'read_note', arguments: { path: 'forward.md' } });
    timesDirect.push(performance.now() - t0);
    const c0 = cpuMs(other.child.pid!);
    t0 = performance.now();
    await via.callTool({ name: 'read_note', arguments: { path: 'forward.md' } });
    timesVia.push(performance.now() - t0);
    cpuVia += cpuMs(other.child.pid!) - c0;
  }
  console.log(
    `forward cost (${CALLS} read_note each way, alternating): direct p50 ${ms(median(timesDirect))} p99 ${ms(percentile(timesDirect, 99))}; forwarded p50 ${ms(median(timesVia))} p99 ${ms(percentile(timesVia, 99))}; added p50 ${ms(median(timesVia) - median(timesDirect))}, p99 ${ms(percentile(timesVia, 99) - percentile(timesDirect, 99))}; forwarder CPU ${ms(cpuVia / CALLS)} a call`,
  );
});

for (const n of [1, 2, 3]) {
  await withCluster(n, async (c) => {
    await sleep(4000);
    const conns = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend'`.execute(c.db.db);
    const rows = await Promise.all(
      c.processes.map(async (p) => {
        return `${p.name} ${rssMiB(p.child.pid!).toFixed(0)} MiB, ${await c.ownedBy(p)} vaults`;
      }),
    );
    console.log(
      `${n} process(es), 7 vaults: ${rows.join('; ')}; server connections ${conns.rows[0].n} (the bench's own pool of up to 4 included)`,
    );
  });
}
