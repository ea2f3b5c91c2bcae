// Admission: decides before any work whether a call may run — rate buckets (per credential, then per
// user), concurrency slots per admission class (the user's own, then the server's), daily quota (per
// credential, then per user) — in that order. Costs no database query: a user's limits come from a map
// the host keeps current.
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { Refusal } from '../../sdk/refusals.js';
import type { AdmissionClass, Principal } from '../../sdk/types.js';
import { screenArguments } from './argument-screen.js';

export interface AdmissionSettings {
  readonly callsPerMinute: number;
  readonly writesPerMinute: number;
  readonly concurrency: Readonly<Record<AdmissionClass, number>>;
  readonly queueTimeoutMs: number;
  readonly dailyQuota: number;
  /** Deepest nesting of tool arguments accepted (admission.maxArgumentDepth). */
  readonly maxArgumentDepth?: number;
  /** The defaults every user gets over all their credentials (admission.perUser); 0 = no such limit. */
  readonly perUser?: UserLimits;
}

/** Limits over all of one user's credentials together; 0 means no limit of that kind beyond the others. */
export interface UserLimits {
  readonly callsPerMinute: number;
  readonly writesPerMinute: number;
  readonly concurrency: Readonly<Record<AdmissionClass, number>>;
  readonly dailyQuota: number;
  readonly sessions: number;
}

export const NO_USER_LIMITS: UserLimits = {
  callsPerMinute: 0,
  writesPerMinute: 0,
  concurrency: { read: 0, write: 0, expensive: 0 },
  dailyQuota: 0,
  sessions: 0,
};

/** A user's stored overrides on top of the operator's per-user defaults. */
export function effectiveLimits(
  defaults: UserLimits,
  override:
    | (Partial<Omit<UserLimits, 'concurrency'>> & { concurrency?: Partial<Record<AdmissionClass, number>> })
    | undefined,
): UserLimits {
  if (!override) return defaults;
  return {
    callsPerMinute: override.callsPerMinute ?? defaults.callsPerMinute,
    writesPerMinute: override.writesPerMinute ?? defaults.writesPerMinute,
    concurrency: { ...defaults.concurrency, ...(override.concurrency ?? {}) },
    dailyQuota: override.dailyQuota ?? defaults.dailyQuota,
    sessions: override.sessions ?? defaults.sessions,
  };
}

/** A counting semaphore whose waiters give up after a timeout. */
export class Slots {
  private inUse = 0;
  private readonly waiters: Array<() => void> = [];
  /** May change while slots are held (a user's limit was edited); it applies to the next acquire. */
  constructor(public limit: number) {}

  get busy(): number {
    return this.inUse;
  }

  async acquire(timeoutMs: number): Promise<boolean> {
    if (this.inUse < this.limit) {
      this.inUse++;
      return true;
    }
    if (timeoutMs <= 0) return false;
    return new Promise<boolean>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.inUse++;
        resolve(true);
      };
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(wake);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(wake);
    });
  }

  release(): void {
    this.inUse--;
    const next = this.waiters.shift();
    if (next) next();
  }
}

/**
 * Write-class calls running now, per vault, with a change signal: the index's group commit waits for
 * the write calls in flight to hand it their notes, and stops waiting as soon as they have (or ended).
 */
export class WriteCallGauge {
  private readonly counts = new Map<number, number>();
  private readonly listeners = new Set<() => void>();

  inFlight(vaultId: number): number {
    return this.counts.get(vaultId) ?? 0;
  }

  /** Called after every change of any vault's count; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  enter(vaultId: number): void {
    this.counts.set(vaultId, this.inFlight(vaultId) + 1);
  }

  leave(vaultId: number): void {
    const n = this.inFlight(vaultId) - 1;
    if (n > 0) this.counts.set(vaultId, n);
    else this.counts.delete(vaultId);
    for (const l of this.listeners) l();
  }
}

/** Daily quotas kept where every process and every restart sees them (the database): quota.ts. */
export interface QuotaStore {
  /** Count one call against `key`'s quota for today; throws quota_exceeded past `limit`. */
  consume(key: string, limit: number): Promise<void>;
}

export class Admission {
  /** Write-class calls in flight per vault (admitted, not yet released). */
  readonly writeCalls = new WriteCallGauge();
  private readonly calls: RateLimiterMemory;
  private readonly writes: RateLimiterMemory;
  private readonly quota: RateLimiterMemory | undefined;
  private readonly slots: Record<AdmissionClass, Slots>;
  /** Per-user buckets, one limiter per distinct rate (users' overrides differ), keyed by user name. */
  private readonly userBuckets = new Map<string, RateLimiterMemory>();
  private readonly userSlots = new Map<string, Record<AdmissionClass, Slots>>();
  /** The limits of a user by name; the host swaps it in when users change. */
  limitsOf: (user: string) => UserLimits;

  /** Throws invalid_arguments for arguments no validator should walk (too deep, NUL, lone surrogates). */
  screen(args: unknown): void {
    const refusal = screenArguments(args, this.settings.maxArgumentDepth ?? 64);
    if (refusal) throw refusal;
  }

  constructor(
    private readonly settings: AdmissionSettings,
    private readonly quotaStore?: QuotaStore,
  ) {
    const defaults = settings.perUser ?? NO_USER_LIMITS;
    this.limitsOf = () => defaults;
    this.calls = new RateLimiterMemory({ points: settings.callsPerMinute, duration: 60 });
    this.writes = new RateLimiterMemory({ points: settings.writesPerMinute, duration: 60 });
    this.quota =
      settings.dailyQuota > 0 ? new RateLimiterMemory({ points: settings.dailyQuota, duration: 86_400 }) : undefined;
    this.slots = {
      read: new Slots(settings.concurrency.read),
      write: new Slots(settings.concurrency.write),
      expensive: new Slots(settings.concurrency.expensive),
    };
  }

  /** Admit a call; returns the release function for its concurrency slot. Throws a Refusal otherwise. */
  async admit(principal: Principal, admission: AdmissionClass): Promise<() => void> {
    const key = principal.id;
    const user = principal.user;
    const limits = this.limitsOf(user);
    await consume(this.calls, key, 'calls');
    if (limits.callsPerMinute > 0)
      await consume(this.userBucket('calls', limits.callsPerMinute, 60), `u:${user}`, 'user calls');
    if (admission === 'write') {
      await consume(this.writes, key, 'writes');
      if (limits.writesPerMinute > 0)
        await consume(this.userBucket('writes', limits.writesPerMinute, 60), `u:${user}`, 'user writes');
    }
    const waitUntil = Date.now() + this.settings.queueTimeoutMs;
    const own =
      limits.concurrency[admission] > 0 ? this.slotsOf(user, admission, limits.concurrency[admission]) : undefined;
    if (own && !(await own.acquire(this.settings.queueTimeoutMs)))
      throw new Refusal('busy', { admission, limit: own.limit, holder: `of the user "${user}"` });
    const slots = this.slots[admission];
    if (!(await slots.acquire(Math.max(0, waitUntil - Date.now())))) {
      own?.release();
      throw new Refusal('busy', { admission, limit: slots.limit, holder: 'on this server' });
    }
    const releaseSlots = () => {
      slots.release();
      own?.release();
    };
    try {
      if (this.quotaStore) {
        if (this.settings.dailyQuota > 0) await this.quotaStore.consume(`k:${key}`, this.settings.dailyQuota);
        if (limits.dailyQuota > 0) await this.quotaStore.consume(`u:${user}`, limits.dailyQuota);
      } else {
        if (this.quota) await consumeQuota(this.quota, key, this.settings.dailyQuota);
        if (limits.dailyQuota > 0)
          await consumeQuota(this.userBucket('quota', limits.dailyQuota, 86_400), `u:${user}`, limits.dailyQuota);
      }
    } catch (e) {
      releaseSlots();
      throw e;
    }
    let released = false;
    const counted = admission === 'write';
    if (counted) this.writeCalls.enter(principal.vaultId);
    return () => {
      if (!released) {
        released = true;
        releaseSlots();
        if (counted) this.writeCalls.leave(principal.vaultId);
      }
    };
  }

  /** Forget per-user state after users changed (limits apply from the next call; held slots drain). */
  usersChanged(): void {
    for (const [user, slots] of this.userSlots) {
      const limits = this.limitsOf(user);
      for (const cls of Object.keys(slots) as AdmissionClass[])
        if (limits.concurrency[cls] > 0) slots[cls].limit = limits.concurrency[cls];
    }
  }

  private userBucket(kind: string, points: number, duration: number): RateLimiterMemory {
    const name = `${kind}:${points}`;
    let limiter = this.userBuckets.get(name);
    if (!limiter) {
      limiter = new RateLimiterMemory({ points, duration, keyPrefix: name });
      this.userBuckets.set(name, limiter);
    }
    return limiter;
  }

  private slotsOf(user: string, admission: AdmissionClass, limit: number): Slots {
    let mine = this.userSlots.get(user);
    if (!mine) {
      mine = { read: new Slots(limit), write: new Slots(limit), expensive: new Slots(limit) };
      this.userSlots.set(user, mine);
    }
    const slots = mine[admission];
    slots.limit = limit;
    return slots;
  }

  stats(): Record<AdmissionClass, { busy: number; limit: number }> {
    const out = {} as Record<AdmissionClass, { busy: number; limit: number }>;
    for (const [k, s] of Object.entries(this.slots)) out[k as AdmissionClass] = { busy: s.busy, limit: s.limit };
    return out;
  }
}

async function consumeQuota(limiter: RateLimiterMemory, key: string, limit: number): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (e) {
    if (e instanceof RateLimiterRes)
      throw new Refusal('quota_exceeded', { limit, resetsAt: new Date(Date.now() + e.msBeforeNext).toISOString() });
    throw e;
  }
}

async function consume(limiter: RateLimiterMemory, key: string, bucket: string): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (e) {
    if (e instanceof RateLimiterRes) throw new Refusal('rate_limited', { retryAfterMs: e.msBeforeNext, bucket });
    throw e;
  }
}
