// The history family's write observer and its service: keep the version a tool is about to replace,
// move or remove (and the outside editor's version before an agent's first write), then the revision
// once the write is done. Refuses the write when the prior version cannot be kept, unless the operator
// chose history.onRecordFailure: write. Never reads the vault: the writer hands over the bytes.
import { sql } from 'kysely';
import {
  Refusal,
  isRefusal,
  serviceRef,
  type ContributorFactoryContext,
  type Database,
  type Logger,
  type ServiceFactoryContext,
  type WriteEvent,
  type WriteObserver,
} from '../../src/sdk/index.js';
import { HISTORY_DEFAULTS, type HistorySettings } from './settings.js';
import {
  addRevisions,
  keepIncumbent,
  latest,
  prune,
  storeSize,
  type PendingRevision,
  type StoreSize,
} from './store.js';

/** The history family's own service (its recorder), typed for the family's health and observers. */
export const HISTORY = serviceRef<HistoryRecorder>('history');
const key = (vaultId: number, path: string) => `${vaultId}\u0000${path}`;
/** Paths whose latest kept hash the recorder remembers (an LRU-ish bound on its memory). */
const LATEST_KEPT_MAX = 10_000;
/**
 * How long a write's prior version stays pinned against a prune after its `before`: longer than any write
 * takes to reach its `after` (a tool call's deadline is far shorter). A write that never reaches `after`
 * (refused, failed) leaves its pin to expire.
 */
const PIN_MS = 10 * 60_000;
/**
 * The prior versions of the writes between their `before` and `after` in this process ((vault, hash) → until
 * when): every prune spares their bytes. Without it, a prune that dropped a note's last revision in between
 * would drop the version `before` found already kept, and the write's revision would name bytes gone. One map
 * for the process: a reload's new recorder sees the writes its predecessor began.
 */
const pins = new Map<string, { vaultId: number; hash: string; until: number }>();

function pin(vaultId: number, hash: string): void {
  const now = Date.now();
  for (const [k, p] of pins) if (p.until <= now) pins.delete(k);
  pins.set(`${vaultId}\u0000${hash}`, { vaultId, hash, until: now + PIN_MS });
}

/** The versions pinned now in this process, which no prune may drop (the recorder's and the CLI command's). */
export function pinnedVersions(): Array<{ vaultId: number; hash: string }> {
  const now = Date.now();
  return [...pins.values()].filter((p) => p.until > now).map(({ vaultId, hash }) => ({ vaultId, hash }));
}

export function historySettings(raw: Readonly<Record<string, unknown>>): HistorySettings {
  return { ...HISTORY_DEFAULTS, ...(raw.history as Partial<HistorySettings> | undefined) };
}

/** The service `history`: the store's database, settings, prune and size (for /health and the CLI). */
export class HistoryRecorder {
  private feedTable: Promise<boolean> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private pruning: Promise<unknown> | undefined;
  /**
   * The hash of the latest revision this recorder wrote per (vault, path), whose version is stored: an
   * agent editing a note again finds its incumbent here and `before` costs no statement. Bounded; cleared
   * by every prune (which may drop versions).
   */
  private readonly latestKept = new Map<string, string>();
  /**
   * Group commit: revisions waiting for the next statement, and the statement in flight. A write's
   * `after` resolves once its revision is stored, so a tool never returns before its revision exists;
   * writers arriving while a statement runs share the next one.
   */
  private queue: { item: PendingRevision; key: string; done: () => void; failed: (e: unknown) => void }[] = [];
  private flushing: Promise<void> | undefined;
  /** Paths with a revision queued or in flight (a `before` on one of them waits for it). */
  private readonly unsettled = new Map<string, number>();

  constructor(
    readonly db: Database,
    readonly settings: HistorySettings,
    private readonly log: Logger,
    /** The vaults whose history this process prunes: those it serves (their owner prunes the others). */
    private readonly servingVaults?: () => readonly number[],
  ) {}

  start(): void {
    this.timer = setInterval(
      () => void this.prune().catch((e) => this.log.warn({ err: (e as Error).message }, 'history prune failed')),
      this.settings.pruneIntervalMinutes * 60_000,
    );
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** One prune at a time: by age (history.retentionDays), then by size (history.maxStoreBytes). */
  prune(now?: Date): Promise<{ revisions: number; versions: number }> {
    this.latestKept.clear();
    const run =
      (this.pruning as Promise<{ revisions: number; versions: number }> | undefined) ??
      prune(this.db, this.settings.retentionDays, this.settings.maxStoreBytes, now, {
        vaults: this.servingVaults?.(),
        spare: pinnedVersions(),
      }).finally(() => (this.pruning = undefined));
    this.pruning = run;
    return run;
  }

  size(vaultId?: number): Promise<StoreSize> {
    return storeSize(this.db, vaultId);
  }

  /** Whether the change feed's table is there to link revisions to their events (checked once). */
  private linkEvents(): Promise<boolean> {
    this.feedTable ??= sql<{ t: string | null }>`SELECT to_regclass('change_events')::text AS t`.execute(this.db).then(
      (r) => r.rows[0]?.t != null,
      () => false,
    );
    return this.feedTable;
  }

  private tooLarge(size: number): string | null {
    return size > this.settings.maxVersionBytes
      ? `larger than history.maxVersionBytes (${size} > ${this.settings.maxVersionBytes} bytes)`
      : null;
  }

  private remember(vaultId: number, path: string, hash: string | null): void {
    const k = key(vaultId, path);
    this.latestKept.delete(k);
    if (hash === null) return;
    if (this.latestKept.size >= LATEST_KEPT_MAX) this.latestKept.delete(this.latestKept.keys().next().value as string);
    this.latestKept.set(k, hash);
  }

  /** Versions larger than history.maxVersionBytes are not kept, so a writer need not read them for us. */
  incumbentLimit(): number {
    return this.settings.maxVersionBytes;
  }

  async before(e: WriteEvent): Promise<void> {
    if (e.incumbentUnread) {
      const reason = `${this.tooLarge(e.incumbentUnread.size) ?? 'not read'}; replaced without being kept`;
      await this.guard(e, () =>
        keepIncumbent(this.db, e.vaultId, e.path, e.target, null, null, e.incumbentUnread!.size, reason, e.at),
      );
      return;
    }
    if (!e.incumbent) return;
    pin(e.vaultId, e.incumbent.hash);
    if (this.unsettled.has(key(e.vaultId, e.path))) await this.settled();
    if (this.latestKept.get(key(e.vaultId, e.path)) === e.incumbent.hash) return;
    const size = e.incumbent.bytes.length;
    const skipped = this.tooLarge(size);
    await this.guard(e, () =>
      keepIncumbent(
        this.db,
        e.vaultId,
        e.path,
        e.target,
        skipped ? null : { hash: e.incumbent!.hash, bytes: e.incumbent!.bytes },
        e.incumbent!.hash,
        size,
        skipped,
        e.at,
      ),
    );
  }

  async after(e: WriteEvent): Promise<void> {
    const base = {
      vaultId: e.vaultId,
      target: e.target,
      actor: e.origin,
      user: e.user ?? null,
      client: e.client ?? null,
      clientId: e.clientId ?? null,
      tool: e.tool ?? null,
      at: new Date(),
    };
    if (e.kind === 'create' || e.kind === 'replace') {
      if (!e.next) return;
      const skipped = this.tooLarge(e.next.bytes.length);
      const revision = {
        ...base,
        path: e.path,
        kind: e.kind === 'create' ? ('create' as const) : ('write' as const),
        hash: e.next.hash,
        previousHash: e.incumbent?.hash ?? null,
        size: e.next.bytes.length,
        skipped,
      };
      this.remember(e.vaultId, e.path, null);
      await this.enqueue({ revision, blob: skipped ? null : { hash: e.next.hash, bytes: e.next.bytes } });
      if (!skipped) this.remember(e.vaultId, e.path, e.next.hash);
    } else if (e.kind === 'remove') {
      this.remember(e.vaultId, e.path, null);
      const hash = e.incumbent?.hash ?? null;
      const skipped = e.incumbent ? this.tooLarge(e.incumbent.bytes.length) : 'not read (over the files read limit)';
      await this.enqueue({
        revision: {
          ...base,
          path: e.path,
          kind: 'delete',
          hash,
          previousHash: hash,
          size: e.incumbent?.bytes.length ?? null,
          skipped,
        },
        blob: null,
      });
    } else if (e.kind === 'move' && e.toPath) {
      this.remember(e.vaultId, e.path, null);
      this.remember(e.vaultId, e.toPath, null);
      await this.settled();
      const last = await latest(this.db, e.vaultId, e.path);
      const revision = {
        ...base,
        path: e.toPath,
        kind: 'move' as const,
        hash: last?.hash ?? null,
        previousHash: last?.hash ?? null,
        fromPath: e.path,
        size: last?.size ?? null,
        skipped: last ? last.skipped : 'moved before any version was recorded',
      };
      await this.enqueue({ revision, blob: null });
    }
  }

  /** Resolves once every revision queued so far is stored (readers of the store call it first). */
  async settled(): Promise<void> {
    while (this.flushing || this.queue.length) await (this.flushing ?? this.flush()).catch(() => undefined);
  }

  private enqueue(item: PendingRevision): Promise<void> {
    const k = key(item.revision.vaultId, item.revision.path);
    this.unsettled.set(k, (this.unsettled.get(k) ?? 0) + 1);
    const stored = new Promise<void>((done, failed) => this.queue.push({ item, key: k, done, failed }));
    if (!this.flushing) void this.flush();
    return stored;
  }

  /** Store everything queued in one statement, then whatever queued meanwhile, until the queue is empty. */
  private flush(): Promise<void> {
    const run = async () => {
      const link = await this.linkEvents();
      while (this.queue.length) {
        const batch = this.queue;
        this.queue = [];
        try {
          await addRevisions(
            this.db,
            batch.map((b) => b.item),
            link,
          );
          for (const b of batch) b.done();
        } catch (e) {
          for (const b of batch) b.failed(e);
        } finally {
          for (const b of batch) {
            const n = (this.unsettled.get(b.key) ?? 1) - 1;
            if (n > 0) this.unsettled.set(b.key, n);
            else this.unsettled.delete(b.key);
          }
        }
      }
    };
    this.flushing = run().finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  /** A failure to keep the prior version refuses the write (history.onRecordFailure: refuse) or is logged. */
  private async guard(e: WriteEvent, run: () => Promise<void>): Promise<void> {
    try {
      await run();
    } catch (err) {
      if (isRefusal(err)) throw err;
      const reason = `the history family could not keep its prior version (${(err as Error).message.slice(0, 200)})`;
      if (this.settings.onRecordFailure === 'write') {
        this.log.warn(
          { path: e.path, err: (err as Error).message },
          'history: prior version not recorded; writing anyway (history.onRecordFailure: write)',
        );
        return;
      }
      throw new Refusal('write_not_recorded', {
        path: e.path,
        reason,
        setting: 'history.onRecordFailure',
        family: 'history',
      });
    }
  }
}

export const historyProvider = {
  create(ctx: ServiceFactoryContext): HistoryRecorder {
    const r = new HistoryRecorder(ctx.db, historySettings(ctx.settings), ctx.log, () => ctx.servingVaults());
    r.start();
    return r;
  },
  dispose(r: HistoryRecorder): void {
    r.stop();
  },
};

/** The family's write observer: resolved per write, so a reload's new recorder takes over at once. */
export function historyObservers(ctx: ContributorFactoryContext): WriteObserver[] {
  const recorder = () => (ctx.hasService(HISTORY) ? ctx.service(HISTORY) : undefined);
  return [
    {
      name: 'history',
      incumbentLimit: () => recorder()?.incumbentLimit() ?? 0,
      before: async (e) => recorder()?.before(e),
      after: async (e) => recorder()?.after(e),
    },
  ];
}
