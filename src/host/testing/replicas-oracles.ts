// The oracles of the replicas fault scenario (replicas-scenario.ts), checked after quiescence or alongside
// the run: the files, the index and the change events against what the clients were acknowledged, what
// each listener read, the lease epochs and sampled ownership intervals. Reads the database and the vault
// folders; never writes either.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { LOCK_SPACE } from '../cluster/leases.js';
import type { ClusterVault, TestCluster } from './cluster.js';
import { sha, sleep, type Listener, type Trail, type Workload } from './replicas-clients.js';

/** The assertions the scenario makes: a tap Test has them all (the scenario does not import tap). */
export interface Checks {
  ok(value: unknown, message: string): unknown;
  notOk(value: unknown, message: string): unknown;
  equal(found: unknown, wanted: unknown, message: string): unknown;
  not(found: unknown, wanted: unknown, message: string): unknown;
  same(found: unknown, wanted: unknown, message: string): unknown;
  match(found: unknown, pattern: RegExp, message: string): unknown;
  comment(message: string): unknown;
  teardown(fn: () => unknown): unknown;
  passing(): boolean;
}

/** Vault id → the pid holding its lease lock now. */
export async function leaseHolders(c: TestCluster): Promise<Array<{ objid: number; pid: number }>> {
  const rows = await sql<{ objid: number; pid: number }>`
    SELECT objid::int, pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2
      AND classid = ${LOCK_SPACE}::oid`.execute(c.db.db);
  return rows.rows;
}

export async function epochsOf(c: TestCluster): Promise<Map<number, number>> {
  const rows = await c.db.db.selectFrom('vault_leases').select(['vault_id', 'epoch']).execute();
  return new Map(rows.map((r) => [r.vault_id, Number(r.epoch)]));
}

/** Terminate the lease connection of a vault's owner (its pool stays up); how many were terminated. */
export async function cutLease(c: TestCluster, vaultId: number): Promise<number> {
  const r = await sql<{ n: number }>`
    SELECT count(pg_terminate_backend(a.pid))::int AS n FROM pg_stat_activity a
    JOIN pg_locks k ON k.pid = a.pid AND k.locktype = 'advisory' AND k.granted AND k.objsubid = 2
      AND k.classid = ${LOCK_SPACE}::oid AND k.objid = ${vaultId}::oid`.execute(c.db.db);
  return r.rows[0].n;
}

export interface LeaseSampler {
  /** Stop sampling, then check: epochs only grow, the lock holder is the epoch's owner, no overlap. */
  check(t: Checks, vaults: readonly ClusterVault[]): Promise<void>;
  stop(): void;
}

/**
 * Every 100 ms, each vault's epoch, its recorded owner and the lock holder's process. Per vault, epochs
 * must only grow, the lock holder must be the epoch's owner, and the sampled interval of an epoch must end
 * before the next epoch's begins (owners' intervals never overlap).
 */
export function sampleLeases(c: TestCluster): LeaseSampler {
  const intervals = new Map<number, Array<{ epoch: number; owner: string; first: number; last: number }>>();
  const problems: string[] = [];
  const mismatchSince = new Map<number, { key: string; since: number }>();
  const reported = new Set<string>();
  let sampling = true;
  const sample = async () => {
    const rows = await sql<{ vault_id: number; epoch: string; owner: string; holder: string | null }>`
      SELECT l.vault_id, l.epoch, l.owner, a.application_name AS holder FROM vault_leases l
      LEFT JOIN pg_locks k ON k.locktype = 'advisory' AND k.granted AND k.objsubid = 2
        AND k.classid = ${LOCK_SPACE}::oid AND k.objid = l.vault_id::oid
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
          problems.push(`vault ${r.vault_id} epoch ${epoch}: lock held by ${r.holder}, owner ${r.owner} for 5 s`);
        }
      } else mismatchSince.delete(r.vault_id);
      let list = intervals.get(r.vault_id);
      if (!list) intervals.set(r.vault_id, (list = []));
      const last = list.at(-1);
      if (last?.epoch === epoch) last.last = now;
      else if (last && epoch < last.epoch)
        problems.push(`vault ${r.vault_id}: epoch went back from ${last.epoch} to ${epoch}`);
      else list.push({ epoch, owner: r.owner, first: now, last: now });
    }
  };
  const loop = (async () => {
    while (sampling) {
      await sample().catch(() => undefined); // the database is restarting
      await sleep(100);
    }
  })();
  return {
    stop() {
      sampling = false;
    },
    async check(t, vaults) {
      sampling = false;
      await loop;
      t.same(problems.slice(0, 10), [], 'sampled leases: epochs only grow, the lock holder is the epoch’s owner');
      for (const v of vaults) {
        const list = intervals.get(v.id) ?? [];
        const overlaps = list.slice(1).filter((x, i) => x.first <= list[i].last);
        t.same(overlaps, [], `${v.name}: owners’ sampled intervals never overlap (${list.length} epochs seen)`);
      }
    },
  };
}

/** The notes under a vault folder (dot folders left out): path → content hash. */
function filesOf(root: string): Map<string, string> {
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
}

async function indexOf(c: TestCluster, vaultId: number): Promise<Map<string, string>> {
  const rows = await c.db.db
    .selectFrom('notes')
    .select(['path', 'content_hash'])
    .where('vault_id', '=', vaultId)
    .execute();
  return new Map(rows.map((r) => [r.path as string, r.content_hash as string]));
}

/**
 * Quiescence: every vault's index catches up with its files; then every acknowledged write is on disk as
 * acknowledged, and there is exactly one created event per acknowledged write and per outside edit.
 */
export async function checkFilesIndexEvents(t: Checks, c: TestCluster, work: Workload): Promise<void> {
  const same = (a: Map<string, string>, b: Map<string, string>) =>
    JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());
  for (const v of c.vaults) {
    let files = filesOf(v.root);
    let index = await indexOf(c, v.id);
    for (let i = 0; i < 150 && !same(files, index); i++) {
      await sleep(200);
      files = filesOf(v.root);
      index = await indexOf(c, v.id);
    }
    t.same([...index].sort(), [...files].sort(), `${v.name}: the index equals the files`);
    const mine = work.acked.get(v.name);
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
    const expected = [...(mine?.keys() ?? []), ...work.outside.filter((o) => o.vault === v.name).map((o) => o.path)];
    const wrongCounts = expected.filter((p) => counts.get(p) !== 1).map((p) => `${p}: ${counts.get(p) ?? 0}`);
    t.same(wrongCounts, [], `${v.name}: exactly one created event per acknowledged write and outside edit`);
    t.same(
      [...counts].filter(([, n]) => n > 1),
      [],
      `${v.name}: no duplicate created events`,
    );
  }
}

/**
 * Every change event of a listener's vault reached it, over a stream or by resuming from its cursor after
 * reopening one (no final sweep: an event only counts if a notification or a resume read it). When one is
 * missing, the database's sessions and the processes' pool, lease and forward metrics go to the trail.
 */
export async function checkListeners(
  t: Checks,
  c: TestCluster,
  listeners: readonly Listener[],
  trail: Trail,
): Promise<void> {
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
    if (missing.length) await traceDatabaseAndPools(c, trail);
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
}

async function traceDatabaseAndPools(c: TestCluster, trail: Trail): Promise<void> {
  const act = await sql<Record<string, unknown>>`
    SELECT pid, application_name AS app, state, wait_event_type AS wt, wait_event AS we,
      extract(epoch from now() - xact_start)::int AS xs, extract(epoch from now() - state_change)::int AS sc,
      left(query, 160) AS q
    FROM pg_stat_activity WHERE datname IS NOT NULL AND pid <> pg_backend_pid() ORDER BY xact_start NULLS LAST`.execute(
    c.db.db,
  );
  for (const r of act.rows) trail.push(`ACT ${JSON.stringify(r)}`);
  const waits = await sql<Record<string, unknown>>`
    SELECT pid, locktype, mode, relation::regclass::text AS rel, objid FROM pg_locks WHERE NOT granted`.execute(
    c.db.db,
  );
  for (const r of waits.rows) trail.push(`WAIT ${JSON.stringify(r)}`);
  for (const p of c.processes.filter((x) => !x.exited)) {
    const m = await fetch(`${p.url}/metrics`)
      .then((r) => r.text())
      .catch((e) => String(e));
    const lines = m.split('\n').filter((x) => /pool|lease|forward/.test(x) && !x.startsWith('#'));
    trail.push(`METRICS ${p.name} ${lines.join(' | ')}`);
  }
}
