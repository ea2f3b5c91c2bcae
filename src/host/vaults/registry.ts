// The vaults this process serves: each root opened through the fs core with its own index pipeline, the
// 'index' service that routes every call to the caller's vault, and the per-vault state /health shows.
// A vault that cannot be opened, or whose root vanishes, is marked unavailable; it never stops the others.
import type { Kysely } from 'kysely';
import type { IndexService } from '../../sdk/index-service.js';
import { Refusal } from '../../sdk/refusals.js';
import type { Logger, VaultHandle, WorkerPool } from '../../sdk/types.js';
import type { VaultRow } from '../auth/vaults.js';
import { IndexPipeline, type ContributorEntry, type IndexSettings } from '../index/index.js';
import type { WriteCallCounter } from '../index/types.js';
import { openVault, type OpenVaultOptions } from '../vault/index.js';
import { readOnlyVault } from '../vault/read-only.js';
import { examineRoot, refuseOverlap, rootGone, type RootIdentity } from '../vault/roots.js';

export interface VaultRegistryDeps {
  readonly db: Kysely<any>;
  readonly workers: WorkerPool;
  readonly log: Logger;
  readonly index: IndexSettings;
  readonly open: OpenVaultOptions;
  readonly readOnly: boolean;
  readonly obsidianName: (row: VaultRow) => string | null;
  readonly contributors: () => readonly ContributorEntry[];
  readonly writeCalls?: WriteCallCounter;
  /**
   * Several processes on one PostgreSQL server: only the vault's lease owner runs its pipeline and
   * writes; the others hold it on standby (read-only, no watcher, no index). Absent: this process owns all.
   */
  readonly ownership?: VaultOwnership;
}

export interface VaultOwnership {
  owns(vaultId: number): boolean;
  /** The lease epoch under which this process owns the vault (1: the first owner ever). */
  epoch(vaultId: number): number | undefined;
  /** The fence of the vault's index transactions under the current lease. */
  fence(vaultId: number): (trx: Kysely<any>) => Promise<void>;
}

/** serving: owned here (pipeline running); standby: another process owns it (opened read-only, no index). */
export type VaultState = 'serving' | 'standby' | 'unavailable';

/** One vault as this process holds it. */
export interface ServedVault {
  readonly row: VaultRow;
  state: VaultState;
  /** Why it is unavailable (for the operator: may name paths; /health redacts them). */
  reason?: string;
  identity?: RootIdentity;
  handle?: VaultHandle;
  index?: IndexPipeline;
}

/** What /health and `vaults list` show of one vault. */
export interface VaultHealth {
  readonly state: VaultState;
  readonly reason?: string;
  readonly notes?: number;
  readonly pending?: number;
  readonly watcher?: string;
  readonly failures?: number;
  readonly lastError?: string;
}

export class VaultRegistry {
  private readonly served = new Map<number, ServedVault>();
  /** The serve() in progress of each vault (they run one after the other). */
  private readonly serving = new Map<number, Promise<unknown>>();
  private checkTimer: NodeJS.Timeout | undefined;
  private checking = false;
  private closed = false;
  /** While held, pipelines are made but not started (the host holds them until the families serve). */
  private held: IndexPipeline[] | undefined;
  /** The 'index' service families see: every call goes to the pipeline of the vault it names. */
  readonly indexService: IndexService;

  constructor(private readonly deps: VaultRegistryDeps) {
    const of = (vaultId: number) => this.pipeline(vaultId);
    this.indexService = {
      noteWritten: (v, p, o) => of(v).noteWritten(v, p, o),
      noteRemoved: (v, p, o) => of(v).noteRemoved(v, p, o),
      noteMoved: (v, f, t, o) => of(v).noteMoved(v, f, t, o),
      hold: (v, p) => of(v).hold(v, p),
      settled: (v) => of(v).settled(v),
      status: (v) => of(v).status(v),
      whenReady: (v, ms) => of(v).whenReady(v, ms),
    };
  }

  /**
   * Open a vault and start its pipeline. `strict` (the vault.path vault) throws when it cannot be opened;
   * any other vault is kept as unavailable with the reason, so the rest keep serving.
   */
  serve(
    row: VaultRow,
    options: {
      strict?: boolean;
      prepare?: (fs: VaultHandle['fs']) => Promise<void>;
      /** Reopen even when the state would not change (a lease lost and maybe won back: a fresh pipeline). */
      restart?: boolean;
    } = {},
  ): Promise<ServedVault> {
    // One change of a vault at a time: a lease lost and won back at once (a reconnect) must not interleave
    // a standby open with a serving one (the late one would overwrite the other's entry, pipeline and all).
    // Each run reads the ownership as it is when it starts.
    const previous = this.serving.get(row.id) ?? Promise.resolve();
    const next = previous.then(
      () => this.serveNow(row, options),
      () => this.serveNow(row, options),
    );
    const tail = next.catch(() => undefined);
    this.serving.set(row.id, tail);
    void tail.then(() => {
      if (this.serving.get(row.id) === tail) this.serving.delete(row.id);
    });
    return next;
  }

  private async serveNow(
    row: VaultRow,
    options: { strict?: boolean; prepare?: (fs: VaultHandle['fs']) => Promise<void>; restart?: boolean },
  ): Promise<ServedVault> {
    const existing = this.served.get(row.id);
    const owned = this.deps.ownership?.owns(row.id) ?? true;
    if (!options.restart && existing?.state === (owned ? 'serving' : 'standby')) return existing;
    if (existing?.handle) await this.stop(row.id, CHANGING_OWNER);
    const entry: ServedVault = existing ?? { row, state: 'unavailable' };
    this.served.set(row.id, entry);
    try {
      // vault.path is created when missing (single-user start); any other root must exist already.
      const identity = options.strict ? undefined : await examineRoot(row.root);
      if (identity) refuseOverlap(identity, this.identitiesExcept(row.id));
      const opened = await openVault(row.root, { ...this.deps.open, log: this.deps.log });
      const fs = this.deps.readOnly || !owned ? readOnlyVault(opened) : opened;
      entry.identity = identity ?? (await examineRoot(row.root));
      const handle: VaultHandle = { id: row.id, name: row.name, obsidianName: this.deps.obsidianName(row), fs };
      if (!owned) {
        entry.handle = handle;
        entry.state = 'standby';
        delete entry.reason;
        this.deps.log.info({ vault: row.name }, 'vault on standby: another process owns it');
        return entry;
      }
      if (options.prepare) await options.prepare(fs);
      const index = new IndexPipeline({
        db: this.deps.db,
        vault: handle,
        workers: this.deps.workers,
        log: this.deps.log,
        settings: this.deps.index,
        contributors: this.deps.contributors,
        writeCalls: this.deps.writeCalls,
        fence: this.deps.ownership?.fence(row.id),
        resumed: this.deps.ownership ? () => (this.deps.ownership?.epoch(row.id) ?? 1) > 1 : undefined,
      });
      entry.handle = handle;
      entry.index = index;
      entry.state = 'serving';
      delete entry.reason;
      // The initial scan runs in the background: serving never waits for the index.
      if (this.held) this.held.push(index);
      else index.start();
      this.deps.log.info({ vault: row.name }, 'vault serving');
    } catch (e) {
      const before = entry.reason;
      entry.state = 'unavailable';
      entry.reason = e instanceof Error ? e.message : String(e);
      if (options.strict) {
        this.served.delete(row.id);
        throw e;
      }
      // The root check retries unavailable vaults: say it once per reason, not once per round.
      if (entry.reason !== before) this.deps.log.error({ vault: row.name, reason: entry.reason }, 'vault unavailable');
    }
    return entry;
  }

  /** Make pipelines without starting them, until release(). */
  hold(): void {
    this.held ??= [];
  }

  release(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const index of held) if (!index.isClosed()) index.start();
  }

  /** Stop serving a vault (removed, or its root vanished): its pipeline stops, the others carry on. */
  async stop(id: number, reason?: string): Promise<void> {
    const entry = this.served.get(id);
    if (!entry) return;
    const { index, handle } = entry;
    // New calls are refused at once when the vault stays listed (another owner, its root gone); the pipeline
    // closes before it is let go of: the batch it is committing finishes, and its contributors may ask for
    // the index's status there (refused, every note of that batch was quarantined for good).
    if (reason !== undefined) {
      entry.state = 'unavailable';
      entry.reason = reason;
    }
    await index
      ?.close()
      .catch((e) => this.deps.log.warn({ vault: entry.row.name, err: String(e) }, 'index close failed'));
    if (entry.index !== index) return; // another stop or serve has taken over the entry meanwhile
    entry.index = undefined;
    entry.handle = undefined;
    if (reason === undefined) this.served.delete(id);
    await handle?.fs.close().catch(() => undefined);
  }

  /** The vault a principal is bound to; refuses vault_unavailable (without paths) when it is not serving. */
  handle(id: number): VaultHandle {
    const entry = this.served.get(id);
    if (entry?.state === 'serving' && entry.handle) return entry.handle;
    throw new Refusal('vault_unavailable', { reason: unavailableReason(entry) });
  }

  /** The vaults whose handle `handle(id)` gives now: owned here, pipeline running, root reachable. */
  servingIds(): number[] {
    const ids: number[] = [];
    for (const [id, entry] of this.served) if (entry.state === 'serving' && entry.handle) ids.push(id);
    return ids;
  }

  /** Whether this process can open a vault's root (a lease is bid for only then). */
  canServe(id: number): boolean {
    const state = this.served.get(id)?.state;
    return state === 'serving' || state === 'standby';
  }

  /** Ownership of a vault changed: serve it (owned) or put it on standby, stopping its pipeline first. */
  async ownershipChanged(row: VaultRow): Promise<void> {
    if (this.closed) return;
    await this.serve(row);
  }

  find(id: number): VaultHandle | undefined {
    return this.served.get(id)?.handle;
  }

  pipeline(id: number): IndexPipeline {
    const entry = this.served.get(id);
    if (entry?.index) return entry.index;
    throw new Refusal('vault_unavailable', { reason: unavailableReason(entry) });
  }

  get(id: number): ServedVault | undefined {
    return this.served.get(id);
  }

  all(): ServedVault[] {
    return [...this.served.values()];
  }

  /** The roots of every other vault held (serving or not, when known), for overlap checks. */
  identitiesExcept(id: number): Array<{ name: string; identity: RootIdentity }> {
    return this.all()
      .filter((v) => v.row.id !== id && v.identity)
      .map((v) => ({ name: v.row.name, identity: v.identity! }));
  }

  contributorsChanged(): void {
    for (const v of this.served.values()) v.index?.contributorsChanged();
  }

  health(): Record<string, VaultHealth> {
    const out: Record<string, VaultHealth> = {};
    for (const v of this.served.values()) {
      if (!v.index) {
        out[v.row.name] = { state: v.state, ...(v.reason ? { reason: v.reason } : {}) };
        continue;
      }
      const st = v.index.status();
      out[v.row.name] = {
        state: v.state,
        notes: st.indexed,
        pending: st.pending,
        watcher: st.watcher,
        failures: st.failures,
        ...(st.lastError ? { lastError: st.lastError } : {}),
      };
    }
    return out;
  }

  /**
   * Every `seconds`: a serving vault whose root vanished or was replaced becomes unavailable; an
   * unavailable one whose root is back is served again. 0 turns the check off.
   */
  startChecks(seconds: number): void {
    if (seconds <= 0) return;
    this.checkTimer = setInterval(() => void this.check(), seconds * 1000);
    this.checkTimer.unref();
  }

  /** One round of the root check (exposed for tests and the CLI). */
  async check(): Promise<void> {
    if (this.checking || this.closed) return;
    this.checking = true;
    try {
      for (const v of this.all()) {
        if (v.state === 'serving' && v.identity) {
          const gone = await rootGone(v.identity);
          if (gone) {
            this.deps.log.error(
              { vault: v.row.name, reason: gone },
              'vault root lost: the vault is unavailable until it is back',
            );
            await this.stop(v.row.id, gone);
          }
        } else if (v.state === 'standby' && (this.deps.ownership?.owns(v.row.id) ?? true)) {
          await this.serve(v.row);
        } else if (v.state === 'unavailable' && !this.closed) {
          await this.serve(v.row);
        }
      }
    } finally {
      this.checking = false;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.checkTimer);
    await Promise.all([...this.served.keys()].map((id) => this.stop(id)));
  }
}

/** The reason a vault holds while it moves between standby and serving here (a lease won or lost). */
const CHANGING_OWNER = 'changing owner';

function unavailableReason(entry: ServedVault | undefined): string {
  if (!entry) return 'it is not served by this server';
  if (entry.reason === CHANGING_OWNER) return 'its owner process is changing; retry in a moment';
  if (entry.state === 'standby') return 'another server process owns it now; retry in a moment';
  return 'its root folder cannot be opened';
}
