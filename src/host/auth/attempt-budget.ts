// Budgets of attempts per key (a client address) over a fixed window, kept in PostgreSQL so that every
// process sharing the database counts against one number, and counted atomically BEFORE the guarded
// work (a password check, a registration) runs: parallel attempts can never all see room left. Never
// checks a credential itself; never keeps a counter in memory.
import { sql, type Kysely } from 'kysely';

export interface BudgetRule {
  /** Attempts allowed per window. */
  readonly limit: number;
  readonly windowSeconds: number;
}

export type Spent =
  | { readonly allowed: true; readonly attempts: number }
  | { readonly allowed: false; readonly attempts: number; readonly retryAfterSeconds: number };

/** The bucket of failed sign-ins per address: the panel and the OAuth sign-in share it (oauth.signInFailures). */
export const SIGN_IN_BUCKET = 'sign-in';
/** The bucket of dynamic client registrations per address (oauth.registrationsPerHour). */
export const REGISTRATION_BUCKET = 'oauth-register';

/** How often one process sweeps rows whose window has passed. */
const SWEEP_EVERY_MS = 60_000;

export class AttemptBudget {
  private lastSweep = 0;

  constructor(
    private readonly db: Kysely<any>,
    readonly bucket: string,
    /** Read on every attempt, so a settings reload applies at once. */
    private readonly rule: () => BudgetRule,
  ) {}

  /**
   * Count one attempt for `key` and say whether it may go ahead. One statement: a new row, a row whose
   * window has passed (restarted at 1), or one more attempt in the current window; the database clock
   * decides, so processes with skewed clocks agree. A refused attempt counts too, but never extends the window.
   * The wait is measured from when the row was written, not from the statement's start: a statement that
   * queued behind another's lock started earlier than that one set the window, and would say 61 s of 60.
   */
  async spend(key: string): Promise<Spent> {
    const { limit, windowSeconds } = this.rule();
    const window = sql`make_interval(secs => ${windowSeconds}::double precision)`;
    const { rows } = await sql<{ attempts: number; retry_after: number }>`
      INSERT INTO auth_attempt_budgets AS b (bucket, key, attempts, resets_at)
      VALUES (${this.bucket}, ${key}, 1, now() + ${window})
      ON CONFLICT (bucket, key) DO UPDATE SET
        attempts  = CASE WHEN b.resets_at <= now() THEN 1 ELSE LEAST(b.attempts, 1000000000) + 1 END,
        resets_at = CASE WHEN b.resets_at <= now() THEN now() + ${window} ELSE b.resets_at END
      RETURNING attempts, ceil(extract(epoch FROM resets_at - clock_timestamp()))::integer AS retry_after
    `.execute(this.db);
    void this.maybeSweep();
    const attempts = Number(rows[0].attempts);
    if (attempts <= limit) return { allowed: true, attempts };
    return { allowed: false, attempts, retryAfterSeconds: Math.max(1, Number(rows[0].retry_after)) };
  }

  /** Give back the attempt `spend` counted, when it turned out not to be a failure (a right password). */
  async refund(key: string): Promise<void> {
    await sql`
      UPDATE auth_attempt_budgets SET attempts = GREATEST(attempts - 1, 0)
      WHERE bucket = ${this.bucket} AND key = ${key} AND resets_at > now()
    `.execute(this.db);
  }

  /** Delete rows whose window has passed (of every bucket). */
  async sweep(): Promise<number> {
    const r = await sql`DELETE FROM auth_attempt_budgets WHERE resets_at <= now()`.execute(this.db);
    return Number(r.numAffectedRows ?? 0);
  }

  private async maybeSweep(): Promise<void> {
    const now = Date.now();
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    await this.sweep().catch(() => undefined);
  }
}

/** The one sign-in budget (failed sign-ins per address), shared by the panel and the OAuth pages. */
export function signInBudget(db: Kysely<any>, oauth: () => { signInFailures: number; signInWindowSeconds: number }) {
  return new AttemptBudget(db, SIGN_IN_BUCKET, () => ({
    limit: oauth().signInFailures,
    windowSeconds: oauth().signInWindowSeconds,
  }));
}

/** Dynamic client registrations per address per hour. */
export function registrationBudget(db: Kysely<any>, oauth: () => { registrationsPerHour: number }) {
  return new AttemptBudget(db, REGISTRATION_BUCKET, () => ({
    limit: oauth().registrationsPerHour,
    windowSeconds: 3600,
  }));
}
