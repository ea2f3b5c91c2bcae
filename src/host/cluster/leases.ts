// Vault ownership among several processes on one PostgreSQL server. PostgreSQL is the only arbiter:
// a process owns a vault while its lease connection (one dedicated session, never pooled) holds the
// session advisory lock (LOCK_SPACE, vault id). Winning the lock bumps the vault's epoch in
// `vault_leases`, the fencing token every index transaction checks (fence.ts), so a deposed owner can
// never commit after its successor took over. Losing the lease connection is fail-stop: every owned
// vault is given up at once, before the process tries to reconnect and bid again.
//
// Placement: a process bids only for vaults it can serve (their root is visible here), and while it
// owns fewer than its share (⌈vaults / live bidders⌉, the bidders read from `cluster_processes`); a vault
// left unowned for a few rounds is taken by anyone, so a share never strands a vault. Fair shares: once
// every vault has an owner, the process owning the most hands back what it holds past its share (or one
// vault, when it owns two more than the least loaded live bidder) — only while another live bidder is
// under its share, never twice within a settle period — by the same fenced path as a failover: it stops
// routing the vault, waits for its writes in flight, stops the pipeline, then unlocks; the next owner's
// bid bumps the epoch.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import type { Logger } from '../../sdk/types.js';

/** The advisory lock space of vault leases: the first key of pg_try_advisory_lock(int4, int4). */
export const LOCK_SPACE = 0x4578_6f31;
/** NOTIFY channel: a vault changed owner (payload: its id). */
export const OWNER_CHANNEL = 'exo_vault_owner';
/** application_name prefix of lease connections; bidding processes add `bid:` (counted for shares). */
const APP_PREFIX = 'exocortex-lease';

export interface LeaseOptions {
  readonly url: string;
  /** The shared pool (owner lookups; never the lease itself). */
  readonly db: Kysely<any>;
  readonly log: Logger;
  /** Where other processes reach this one's HTTP server (null: it cannot be forwarded to). */
  readonly internalUrl: () => string | null;
  /** false: a deployment that owns no vault (read-only search nodes); it only forwards. */
  readonly bid: boolean;
  /** The bidding and heartbeat period. */
  readonly intervalMs: number;
  /** Whether this process can serve a vault (its root is visible here). */
  readonly canServe: (vaultId: number) => Promise<boolean>;
  /** Start serving an acquired vault (pipeline, watcher); a throw gives the lease back. */
  readonly acquired: (vaultId: number, epoch: number) => Promise<void>;
  /** Stop serving a vault now (lease lost or handed back); must not throw. */
  readonly lost: (vaultId: number, reason: string) => Promise<void>;
  /** Before a vault is handed back: wait (bounded) for its calls in flight here; must not throw. */
  readonly drain?: (vaultId: number) => Promise<void>;
}

export interface OwnerInfo {
  readonly owner: string;
  readonly url: string | null;
  readonly epoch: number;
}

export interface LeaseCounters {
  acquired: number;
  lost: number;
  handedBack: number;
  connectionLosses: number;
  /** Bidding processes seen alive at the last round (this one included when it bids). */
  liveBidders: number;
}

export class VaultLeases {
  readonly processId = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private readonly owned = new Map<number, number>();
  /** Vaults seen without any lock holder, by consecutive rounds (to take them past the share). */
  private readonly freeRounds = new Map<number, number>();
  /** Vaults whose work is still stopping after a fail-stop: a new lease on one waits for it. */
  private readonly stopping = new Map<number, Promise<void>>();
  /** Vaults this process could not open: not bid for again until this time. */
  private readonly backoff = new Map<number, number>();
  private owners = new Map<number, OwnerInfo>();
  private ownersAt = 0;
  private ownersRead: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private closed = false;
  readonly counters: LeaseCounters = { acquired: 0, lost: 0, handedBack: 0, connectionLosses: 0, liveBidders: 0 };
  /** When this process last took or handed back a vault (a rebalance waits for things to settle). */
  private lastMove = 0;

  constructor(private readonly o: LeaseOptions) {}

  /** Connect, register this process and run the first bidding round (so a lone process owns at start). */
  async start(): Promise<void> {
    await this.round();
    this.timer = setInterval(() => void this.round(), this.o.intervalMs);
    this.timer.unref();
  }

  owns(vaultId: number): boolean {
    return this.owned.has(vaultId);
  }

  /** The epoch under which this process owns a vault (undefined: not owned). */
  epoch(vaultId: number): number | undefined {
    return this.owned.get(vaultId);
  }

  ownedVaults(): number[] {
    return [...this.owned.keys()];
  }

  /** Who owns a vault now (a cached map, re-read on NOTIFY, after a second, or when `fresh`). */
  async ownerOf(vaultId: number, fresh = false): Promise<OwnerInfo | undefined> {
    if (fresh || Date.now() - this.ownersAt > 1000) await this.readOwners();
    return this.owners.get(vaultId);
  }

  /** Every vault's owner as last read (for /health and `vaults list`). */
  async ownersByVault(): Promise<ReadonlyMap<number, OwnerInfo>> {
    await this.readOwners();
    return this.owners;
  }

  private readOwners(): Promise<void> {
    this.ownersRead ??= (async () => {
      try {
        const next = await vaultOwners(this.o.db);
        this.owners = next;
        this.ownersAt = Date.now();
      } finally {
        this.ownersRead = undefined;
      }
    })();
    return this.ownersRead;
  }

  private round(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.ticking ??= this.roundNow()
      .catch((e) => {
        this.o.log.warn({ err: String(e) }, 'vault lease round failed; owned vaults are given up');
        this.dropConnection('lease round failed');
      })
      .finally(() => {
        this.ticking = undefined;
      });
    return this.ticking;
  }

  private async roundNow(): Promise<void> {
    const client = await this.connect();
    // The heartbeat doubles as the check that the lease session is alive (query_timeout bounds it).
    await client.query('UPDATE cluster_processes SET seen_at = now() WHERE id = $1', [this.processId]);
    if (!this.o.bid || this.closed) return;
    const state = await client.query<{ id: number; held: boolean; owner: string | null }>(
      `SELECT v.id, l.owner,
              EXISTS (SELECT 1 FROM pg_locks k WHERE k.locktype = 'advisory' AND k.granted AND k.objsubid = 2
                        AND k.classid = $1::oid AND k.objid = v.id::oid) AS held
       FROM vaults v LEFT JOIN vault_leases l ON l.vault_id = v.id ORDER BY v.id`,
      [LOCK_SPACE],
    );
    // Live bidders: processes that bid and renewed their row within a few rounds (a paused or dead one
    // drops out of the count; its vaults stay its own until its lock goes).
    const live = await client.query<{ id: string }>(
      `SELECT id FROM cluster_processes WHERE bids AND seen_at > now() - make_interval(secs => $1)`,
      [liveWindowMs(this.o.intervalMs) / 1000],
    );
    const vaults = state.rows.map((r) => Number(r.id));
    const load = new Map<string, number>(live.rows.map((r) => [r.id, 0]));
    load.set(this.processId, 0);
    for (const r of state.rows)
      if (r.held && r.owner !== null && load.has(r.owner)) load.set(r.owner, load.get(r.owner)! + 1);
    load.set(this.processId, this.owned.size);
    this.counters.liveBidders = load.size;
    const share = Math.ceil(vaults.length / load.size);
    const lowest = Math.min(...[...load].filter(([id]) => id !== this.processId).map(([, n]) => n), Infinity);
    for (const id of this.owned.keys())
      if (!vaults.includes(id)) await this.giveUp(id, 'the vault was removed', client);
    const now = Date.now();
    let free = 0;
    for (const r of state.rows) {
      const id = Number(r.id);
      if (this.owned.has(id)) continue;
      if (r.held) {
        this.freeRounds.delete(id);
        continue;
      }
      free++;
      const rounds = (this.freeRounds.get(id) ?? 0) + 1;
      this.freeRounds.set(id, rounds);
      if (rounds < STRANDED_ROUNDS) {
        if (this.owned.size >= share) continue;
        // A vault handed back goes first to the least loaded live bidder (one round's head start).
        if (rounds < 2 && this.owned.size > lowest) continue;
      }
      if ((this.backoff.get(id) ?? 0) > now) continue;
      if (!(await this.o.canServe(id))) continue;
      await this.bid(id, client);
    }
    const surplus = rebalanceSurplus(this.processId, load, vaults.length);
    if (surplus > 0 && free === 0 && now - this.lastMove > settleMs(this.o.intervalMs)) {
      for (const id of [...this.owned.keys()].slice(-surplus)) {
        this.counters.handedBack++;
        await this.giveUp(id, `handed back: ${this.owned.size} vaults owned, ${load.size} live bidders`, client, true);
      }
    }
  }

  private async bid(id: number, client: pg.Client): Promise<void> {
    const got = await client.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS got', [LOCK_SPACE, id]);
    if (!got.rows[0]?.got) return;
    let epoch: number;
    try {
      // Bumping the epoch waits for any index transaction of the previous owner that still holds the
      // row FOR SHARE; once it commits, every later fence check of the old epoch fails.
      const r = await client.query<{ epoch: string }>(
        `INSERT INTO vault_leases (vault_id, owner, epoch) VALUES ($1, $2, 1)
         ON CONFLICT (vault_id) DO UPDATE SET epoch = vault_leases.epoch + 1, owner = EXCLUDED.owner, acquired_at = now()
         RETURNING epoch`,
        [id, this.processId],
      );
      epoch = Number(r.rows[0].epoch);
      await client.query('SELECT pg_notify($1, $2)', [OWNER_CHANNEL, String(id)]);
    } catch (e) {
      await client.query('SELECT pg_advisory_unlock($1, $2)', [LOCK_SPACE, id]).catch(() => undefined);
      throw e;
    }
    this.owned.set(id, epoch);
    this.freeRounds.delete(id);
    this.lastMove = Date.now();
    this.counters.acquired++;
    this.o.log.info({ vault: id, epoch, process: this.processId }, 'vault lease acquired');
    try {
      // Won back right after a fail-stop: the old pipeline must be gone before a new one starts.
      await this.stopping.get(id);
      await this.o.acquired(id, epoch);
    } catch (e) {
      this.o.log.warn({ vault: id, err: String(e) }, 'vault lease acquired but the vault cannot be served here');
      this.backoff.set(id, Date.now() + 30_000);
      await this.giveUp(id, 'cannot be served here', client);
    }
  }

  private async giveUp(id: number, reason: string, client: pg.Client | undefined, graceful = false): Promise<void> {
    if (!this.owned.has(id)) return;
    // Calls arriving from now on are forwarded (they wait for the next owner); those in flight finish first.
    this.owned.delete(id);
    this.counters.lost++;
    this.lastMove = Date.now();
    if (graceful) {
      this.o.log.info({ vault: id, process: this.processId, reason }, 'vault lease handed back');
      await this.o.drain?.(id);
    }
    await this.o.lost(id, reason);
    await client?.query('SELECT pg_advisory_unlock($1, $2)', [LOCK_SPACE, id]).catch(() => undefined);
    await client?.query('SELECT pg_notify($1, $2)', [OWNER_CHANNEL, String(id)]).catch(() => undefined);
  }

  private connect(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      const client = new pg.Client({
        connectionString: this.o.url,
        application_name: `${APP_PREFIX}:${this.o.bid ? 'bid:' : ''}${this.processId}`.slice(0, 63),
        keepAlive: true,
        keepAliveInitialDelayMillis: 1000,
        query_timeout: leaseQueryTimeoutMs(this.o.intervalMs),
        connectionTimeoutMillis: leaseQueryTimeoutMs(this.o.intervalMs),
      });
      client.on('error', () => this.dropConnection('lease connection error'));
      client.on('end', () => this.dropConnection('lease connection closed'));
      client.on('notification', (n) => {
        if (n.channel === OWNER_CHANNEL) this.ownersAt = 0;
      });
      try {
        await client.connect();
        // The server notices a dead client soon (not after the kernel's two hours): its lock frees.
        await client.query(
          'SET tcp_keepalives_idle = 2; SET tcp_keepalives_interval = 1; SET tcp_keepalives_count = 3',
        );
        await client.query(`LISTEN ${OWNER_CHANNEL}`);
        await client.query(
          `INSERT INTO cluster_processes (id, internal_url, bids, pid, hostname) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (id) DO UPDATE SET internal_url = EXCLUDED.internal_url, seen_at = now()`,
          [this.processId, this.o.internalUrl(), this.o.bid, process.pid, hostname()],
        );
        // Rows of processes gone for a minute are only clutter (ownership is the lock's, not the row's).
        await client.query(`DELETE FROM cluster_processes WHERE seen_at < now() - interval '1 minute'`);
      } catch (e) {
        client.removeAllListeners('end');
        await client.end().catch(() => undefined);
        throw e;
      }
      this.client = client;
      return client;
    })().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  /** Fail-stop: the lease session is gone, so is every lock it held; stop serving every owned vault now. */
  private dropConnection(reason: string): void {
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners('end');
      client.on('error', () => undefined);
      void client.end().catch(() => undefined);
    }
    if (this.owned.size === 0) return;
    this.counters.connectionLosses++;
    this.o.log.error({ reason, vaults: this.ownedVaults() }, 'vault leases lost: their work stops here');
    const ids = [...this.owned.keys()];
    this.owned.clear();
    this.counters.lost += ids.length;
    for (const id of ids) {
      // Awaited by a later bid for the vault (stopping); a stop that fails (the database is down) is logged,
      // never left to reject unheard.
      const stopped = this.o
        .lost(id, reason)
        .catch((e) => this.o.log.error({ vault: id, err: String(e) }, 'stopping a vault failed'))
        .finally(() => {
          if (this.stopping.get(id) === stopped) this.stopping.delete(id);
        });
      this.stopping.set(id, stopped);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.ticking;
    for (const id of [...this.owned.keys()]) await this.giveUp(id, 'shutting down', this.client);
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners('end');
      await client.query('DELETE FROM cluster_processes WHERE id = $1', [this.processId]).catch(() => undefined);
      await client.end().catch(() => undefined);
    }
  }
}

/** Each vault's live owner: the process whose lease session holds its lock, with its address and epoch. */
export async function vaultOwners(db: Kysely<any>): Promise<Map<number, OwnerInfo>> {
  const rows = await sql<{ vault_id: number; owner: string; epoch: string; internal_url: string | null }>`
    SELECT l.vault_id, l.owner, l.epoch, p.internal_url
    FROM vault_leases l
    JOIN pg_locks k ON k.locktype = 'advisory' AND k.granted AND k.objsubid = 2
      AND k.classid = ${LOCK_SPACE}::oid AND k.objid = l.vault_id::oid
    LEFT JOIN cluster_processes p ON p.id = l.owner`.execute(db);
  const out = new Map<number, OwnerInfo>();
  for (const r of rows.rows)
    out.set(Number(r.vault_id), { owner: r.owner, url: r.internal_url, epoch: Number(r.epoch) });
  return out;
}

/** Rounds a vault may stay without an owner before a process past its share takes it anyway. */
const STRANDED_ROUNDS = 3;
/** How recently a process must have renewed its row to count as a live bidder. */
function liveWindowMs(intervalMs: number): number {
  return Math.max(3 * intervalMs, 1500);
}
/** How long after a move (a vault taken or handed back) a process waits before it hands one back. */
function settleMs(intervalMs: number): number {
  return Math.max(4 * intervalMs, 1000);
}

/**
 * How many vaults `me` should hand back now, from every live bidder's load: none unless `me` is the most
 * loaded (ties go to the lowest id, so one process moves at a time) and another bidder is under its
 * share. The surplus past ⌈vaults / bidders⌉, else one vault when `me` owns two more than the least
 * loaded (so 4+0+3 ends 3+2+2, and 3+2+2 stays put: a difference of one never moves anything).
 */
export function rebalanceSurplus(me: string, load: ReadonlyMap<string, number>, vaults: number): number {
  const mine = load.get(me) ?? 0;
  if (load.size < 2 || mine === 0) return 0;
  const share = Math.ceil(vaults / load.size);
  const others = [...load].filter(([id]) => id !== me);
  const lowest = Math.min(...others.map(([, n]) => n));
  if (lowest >= share) return 0;
  if (others.some(([id, n]) => n > mine || (n === mine && id < me))) return 0;
  if (mine > share)
    return Math.min(
      mine - share,
      others.reduce((room, [, n]) => room + Math.max(0, share - n), 0),
    );
  return mine - lowest >= 2 ? 1 : 0;
}

/**
 * A lease statement or connect slower than this counts as a lost lease connection: 3 s, or six rounds when the
 * operator chose slower rounds (and so a slower failover) than that.
 */
export function leaseQueryTimeoutMs(intervalMs: number): number {
  return Math.max(3000, 6 * intervalMs);
}
