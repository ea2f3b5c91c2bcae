// Several `exocortex serve` processes on one PostgreSQL 15 server (fsync on) behind HAProxy (Debian's),
// with writers, an outside editor and faults while they run: kill -9 of a busy vault's owner, the
// termination of an owner's lease connection only (its pool stays up: the fence must hold), SIGSTOP of
// an owner. Oracles after quiescence: every file is its last acknowledged write, exactly one change
// event per acknowledged write and per outside edit, the index equals the files, every vault owned by
// exactly one live process; plus per-user limits across processes, revocation everywhere, a read-only
// deployment that cannot widen a key, and a forged hop refused.
import t from 'tap';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { revokeApiKey } from '../../../src/host/auth/api-keys.js';
import { haproxyAvailable, startCluster, type TestCluster } from '../../../src/host/testing/cluster.js';
import { postgresAvailable, startPostgres } from '../../../src/host/testing/postgres-server.js';

const skip = !postgresAvailable()
  ? 'PostgreSQL 15 server binaries not installed'
  : !haproxyAvailable()
    ? 'HAProxy not installed (.ci/run installs Debian haproxy)'
    : false;

const sha = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// Minutes of faults and quiescence: past tap's default per-file limit.
t.setTimeout(900_000);

t.test('three processes, one PostgreSQL, HAProxy in front: faults lose nothing', { skip }, async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-replicas-'));
  const pg = await startPostgres({ durable: true });
  let cluster: TestCluster | undefined;
  t.teardown(async () => {
    await cluster?.close();
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

  // Writers through the balancer: one path per write, each acknowledged (path, hash) logged.
  const acked = new Map<string, Map<string, string>>();
  const failures: string[] = [];
  const lastError = new Map<string, string>();
  let writing = true;
  const writers = c.vaults.slice(0, 4).map(async (v) => {
    const mine = new Map<string, string>();
    acked.set(v.name, mine);
    const reconnect = async () => {
      for (;;) {
        try {
          return await c.connect(lb, v.key, `writer-${v.name}`);
        } catch (e) {
          lastError.set(v.name, String(e).slice(0, 300));
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
          const r = await client.callTool({ name: 'create_note', arguments: { path: p, content } }, undefined, {
            timeout: 5000,
          });
          const out = r.structuredContent as { content_hash?: string } | undefined;
          if (!r.isError && out?.content_hash) {
            mine.set(p, out.content_hash);
            await sleep(200); // about 5 writes a second per vault: 20 a second in all, within two cores
            break;
          }
          const text = JSON.stringify(r.content);
          lastError.set(v.name, text.slice(0, 300));
          // A retry of a create that landed before its answer was lost: the file holds our content.
          if (/already_exists/.test(text)) {
            const disk = readFileSync(path.join(v.root, p), 'utf8');
            if (disk === content) mine.set(p, sha(content));
            else failures.push(`${p}: exists with other content`);
            break;
          }
        } catch (e) {
          lastError.set(v.name, String(e).slice(0, 300));
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
  await victim!.start();
  await sleep(3000);
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

  // Per-user limits hold across processes: all of a user's calls reach the one owner.
  const limited = c.vaults[5];
  const clients = await Promise.all(c.processes.map((p) => c.connect(p.url, limited.key, 'limited')));
  let admitted = 0;
  let refused = 0;
  for (let i = 0; i < 45; i++) {
    const r = await clients[i % clients.length].callTool({ name: 'list_notes', arguments: {} });
    if (r.isError && /rate_limited/.test(JSON.stringify(r.content))) refused++;
    else if (!r.isError) admitted++;
  }
  t.ok(admitted <= 20, `at most 20 of 45 calls a minute admitted over three processes (admitted ${admitted})`);
  t.ok(refused >= 25, `the rest refused as rate_limited (${refused})`);

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
