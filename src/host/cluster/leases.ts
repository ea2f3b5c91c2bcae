// Vault ownership among several processes on one PostgreSQL server. PostgreSQL is the only arbiter:
// a process owns a vault while its lease connection (one dedicated session, never pooled) holds the
// session advisory lock (LOCK_SPACE, vault id). Winning the lock bumps the vault's epoch in
// `vault_leases`, the fencing token every index transaction checks (fence.ts), so a deposed owner can
// never commit after its successor took over. Losing the lease connection is fail-stop: every owned
// vault is given up at once, before the process tries to reconnect and bid again.
//
// Placement: a process bids only for vaults it can serve (their root is visible here), and while it
// owns fewer than its share (⌈vaults / bidding processes⌉); a vault left unowned for a few rounds is
// taken by anyone, so a share never strands a vault. A process owning more than its share plus one
// hands one back per round (a newly started process gets work without a restart of the others).
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
}

export class VaultLeases {
  readonly processId = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private readonly owned = new Map<number, number>();
  /** Vaults seen without any lock holder, by consecutive rounds (to take them past the share). */
  private readonly freeRounds = new Map<number, number>();
  /** Vaults this process could not open: not bid for again until this time. */
  private readonly backoff = new Map<number, number>();
  private owners = new Map<number, OwnerInfo>();
  private ownersAt = 0;
  private ownersRead: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private closed = false;
  readonly counters: LeaseCounters = { acquired: 0, lost: 0, handedBack: 0, connectionLosses: 0 };

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
        const rows = await sql<{ vault_id: number; owner: string; epoch: string; internal_url: string | null }>`
          SELECT l.vault_id, l.owner, l.epoch, p.internal_url
          FROM vault_leases l
          JOIN pg_locks k ON k.locktype = 'advisory' AND k.granted AND k.objsubid = 2
            AND k.classid = ${LOCK_SPACE}::oid AND k.objid = l.vault_id::oid
          LEFT JOIN cluster_processes p ON p.id = l.owner`.execute(this.o.db);
        const next = new Map<number, OwnerInfo>();
        for (const r of rows.rows)
          next.set(Number(r.vault_id), { owner: r.owner, url: r.internal_url, epoch: Number(r.epoch) });
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
    const state = await client.query<{ id: number; held: boolean; bidders: string }>(
      `SELECT v.id,
              EXISTS (SELECT 1 FROM pg_locks k WHERE k.locktype = 'advisory' AND k.granted AND k.objsubid = 2
                        AND k.classid = $1::oid AND k.objid = v.id::oid) AS held,
              (SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE $2) AS bidders
       FROM vaults v ORDER BY v.id`,
      [LOCK_SPACE, `${APP_PREFIX}:bid:%`],
    );
    const vaults = state.rows.map((r) => Number(r.id));
    const bidders = Math.max(1, Number(state.rows[0]?.bidders ?? 1));
    const share = Math.ceil(vaults.length / bidders);
    for (const id of this.owned.keys())
      if (!vaults.includes(id)) await this.giveUp(id, 'the vault was removed', client);
    const now = Date.now();
    for (const r of state.rows) {
      const id = Number(r.id);
      if (this.owned.has(id)) continue;
      if (r.held) {
        this.freeRounds.delete(id);
        continue;
      }
      const rounds = (this.freeRounds.get(id) ?? 0) + 1;
      this.freeRounds.set(id, rounds);
      if (this.owned.size >= share && rounds < STRANDED_ROUNDS) continue;
      if ((this.backoff.get(id) ?? 0) > now) continue;
      if (!(await this.o.canServe(id))) continue;
      await this.bid(id, client);
    }
    if (this.owned.size > share + 1) {
      const last = [...this.owned.keys()].at(-1)!;
      this.counters.handedBack++;
      await this.giveUp(last, `handed back: ${this.owned.size} vaults owned, a share is ${share}`, client);
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
    this.counters.acquired++;
    this.o.log.info({ vault: id, epoch, process: this.processId }, 'vault lease acquired');
    try {
      await this.o.acquired(id, epoch);
    } catch (e) {
      this.o.log.warn({ vault: id, err: String(e) }, 'vault lease acquired but the vault cannot be served here');
      this.backoff.set(id, Date.now() + 30_000);
      await this.giveUp(id, 'cannot be served here', client);
    }
  }

  private async giveUp(id: number, reason: string, client: pg.Client | undefined): Promise<void> {
    if (!this.owned.has(id)) return;
    this.owned.delete(id);
    this.counters.lost++;
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
        query_timeout: LEASE_QUERY_TIMEOUT_MS,
        connectionTimeoutMillis: LEASE_QUERY_TIMEOUT_MS,
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
    for (const id of ids)
      void this.o
        .lost(id, reason)
        .catch((e) => this.o.log.error({ vault: id, err: String(e) }, 'stopping a vault failed'));
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

/** Rounds a vault may stay without an owner before a process past its share takes it anyway. */
const STRANDED_ROUNDS = 3;
/** A lease statement or connect slower than this counts as a lost lease connection. */
const LEASE_QUERY_TIMEOUT_MS = 3000;

/** The clause an index transaction runs first: the row it locks FOR SHARE blocks a takeover until commit. */
export async function checkFence(trx: Kysely<any>, vaultId: number, owner: string, epoch: number): Promise<void> {
  const r =
    await sql`SELECT 1 FROM vault_leases WHERE vault_id = ${vaultId} AND owner = ${owner} AND epoch = ${epoch} FOR SHARE`.execute(
      trx,
    );
  if (r.rows.length === 0) throw new FencedError(vaultId, epoch);
}

/** A commit refused because another process owns the vault under a newer epoch. */
export class FencedError extends Error {
  constructor(
    readonly vaultId: number,
    readonly epoch: number,
  ) {
    super(`vault ${vaultId}: lease epoch ${epoch} is no longer current; another process owns the vault`);
    this.name = 'FencedError';
  }
}
