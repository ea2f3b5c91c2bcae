// Admission: decides before any work whether a call may run — rate buckets, concurrency slots per
// admission class, daily quota — in that order. Costs no database query.
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
}

/** A counting semaphore whose waiters give up after a timeout. */
export class Slots {
  private inUse = 0;
  private readonly waiters: Array<() => void> = [];
  constructor(readonly limit: number) {}

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

export class Admission {
  /** Write-class calls in flight per vault (admitted, not yet released). */
  readonly writeCalls = new WriteCallGauge();
  private readonly calls: RateLimiterMemory;
  private readonly writes: RateLimiterMemory;
  private readonly quota: RateLimiterMemory | undefined;
  private readonly slots: Record<AdmissionClass, Slots>;

  /** Throws invalid_arguments for arguments no validator should walk (too deep, NUL, lone surrogates). */
  screen(args: unknown): void {
    const refusal = screenArguments(args, this.settings.maxArgumentDepth ?? 64);
    if (refusal) throw refusal;
  }

  constructor(private readonly settings: AdmissionSettings) {
    this.calls = new RateLimiterMemory({ points: settings.callsPerMinute, duration: 60 });
    this.writes = new RateLimiterMemory({ points: settings.writesPerMinute, duration: 60 });
    this.quota = settings.dailyQuota > 0 ? new RateLimiterMemory({ points: settings.dailyQuota, duration: 86_400 }) : undefined;
    this.slots = {
      read: new Slots(settings.concurrency.read),
      write: new Slots(settings.concurrency.write),
      expensive: new Slots(settings.concurrency.expensive),
    };
  }

  /** Admit a call; returns the release function for its concurrency slot. Throws a Refusal otherwise. */
  async admit(principal: Principal, admission: AdmissionClass): Promise<() => void> {
    const key = principal.id;
    await consume(this.calls, key, 'calls');
    if (admission === 'write') await consume(this.writes, key, 'writes');
    const slots = this.slots[admission];
    if (!(await slots.acquire(this.settings.queueTimeoutMs))) throw new Refusal('busy', { admission, limit: slots.limit });
    if (this.quota) {
      try {
        await this.quota.consume(key);
      } catch (e) {
        slots.release();
        if (e instanceof RateLimiterRes) {
          throw new Refusal('quota_exceeded', { limit: this.settings.dailyQuota, resetsAt: new Date(Date.now() + e.msBeforeNext).toISOString() });
        }
        throw e;
      }
    }
    let released = false;
    const counted = admission === 'write';
    if (counted) this.writeCalls.enter(principal.vaultId);
    return () => {
      if (!released) {
        released = true;
        slots.release();
        if (counted) this.writeCalls.leave(principal.vaultId);
      }
    };
  }

  stats(): Record<AdmissionClass, { busy: number; limit: number }> {
    const out = {} as Record<AdmissionClass, { busy: number; limit: number }>;
    for (const [k, s] of Object.entries(this.slots)) out[k as AdmissionClass] = { busy: s.busy, limit: s.limit };
    return out;
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
