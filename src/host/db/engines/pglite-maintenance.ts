// What autovacuum would do for the embedded engine, which runs none: ANALYZE the tables whose rows changed enough,
// and merge the pending lists of GIN indexes that buffer their inserts (fastupdate). Without the first, every table
// keeps the size it had when first planned (empty, on a fresh database), and a named statement's cached generic
// plan (statement-cache.ts) stays whatever was cheapest on empty tables; without the second, a query through such
// an index scans its whole pending list. Never runs on a PostgreSQL server (its autovacuum does this), never inside
// a caller's transaction, and holds the one connection for one table or one index at a time.
import pg from 'pg';

export interface MaintenancePolicy {
  /** Seconds between checks (0: never). */
  readonly intervalSeconds: number;
  /** Rows changed since a table's last ANALYZE before it is due (autovacuum_analyze_threshold's role). */
  readonly baseRows: number;
  /** Plus this fraction of the table's rows (autovacuum_analyze_scale_factor's role). */
  readonly scale: number;
  /** A table analysed less than this many seconds ago waits, unless it has more than doubled since. */
  readonly minGapSeconds: number;
  /**
   * Seconds to the next check for due tables while rows are being written (0: checks only with the full passes). A
   * table that grows fast (a first index, an import) is analysed as it doubles, not up to a whole interval later;
   * pending lists are still merged once an interval.
   */
  readonly busySeconds: number;
}

export const DEFAULT_MAINTENANCE_POLICY: MaintenancePolicy = {
  intervalSeconds: 15,
  baseRows: 50,
  scale: 0.1,
  minGapSeconds: 300,
  busySeconds: 2,
};

export interface MaintenanceRun {
  /** Tables analysed because they were due (over a small sample while rows are being written). */
  readonly analysed: string[];
  /** Tables analysed over a small sample earlier, analysed again in full now that writing has stopped. */
  readonly refined: string[];
  /** GIN indexes whose pending list held pages, and how many were merged. */
  readonly merged: Array<{ index: string; pages: number }>;
  /** Rows were written to user tables since the check before this one. */
  readonly busy: boolean;
}

/**
 * The statistics target of an ANALYZE made while rows are being written (PostgreSQL's default_statistics_target is
 * 100): 3,000 sampled rows instead of 30,000 give the planner the row counts it needs to stop using plans made on
 * smaller tables. When the table has more than doubled since it was last analysed (a first index, an import), such an
 * ANALYZE also names only the columns whose type PostgreSQL analyses in the standard way (plainColumns): the element
 * statistics of tsvectors and arrays, and of expression indexes, serve the selectivity of `@@` and `@>`, not the row
 * counts and lookups of the statements doing the writing, and they were most of the work (the keyword table's
 * three sampled ANALYZEs in a first index of ~10k notes took a sixth as long without them, bench/writes with
 * BENCH_STATEMENTS=1); a table that grew less (a server in steady use) gets them over the sample. Each table analysed
 * so is analysed again in full, every column and index, once REFINE_AFTER_QUIET checks in a row found no rows
 * written: not at a first index's short pause, where the largest table's full ANALYZE would cost more than the
 * samples saved.
 */
export const WRITING_STATISTICS_TARGET = 10;
/** Checks in a row without rows written before the tables analysed over a sample are analysed in full. */
export const REFINE_AFTER_QUIET = 2;

/** Checks in a row without writes before the cadence goes back to the full interval (startup counts as writing). */
const QUIET_CHECKS = 5;
/** A timer may fire this early; the full pass it was set for still runs. */
const TIMER_SLACK_MS = 50;

type Log = { debug(obj: object, msg: string): void; warn(obj: object, msg: string): void };

export class EmbeddedMaintenance {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<MaintenanceRun> | undefined;
  private stopped = false;
  /** When the last full pass (analyse and merge) ended, in ms since the epoch. */
  private lastFull = 0;
  /** Rows written to user tables (PostgreSQL's cumulative counters) as of the last check. */
  private lastWrites = 0;
  /** Checks in a row that found no rows written (the cadence slows to the interval after QUIET_CHECKS). */
  private quietChecks = 0;
  /** Tables (schema-qualified, quoted) last analysed over WRITING_STATISTICS_TARGET's sample. */
  private readonly sampled = new Set<string>();
  /** Checks in a row (full passes and the checks between) that found no rows written. */
  private unwrittenChecks = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly policy: MaintenancePolicy = DEFAULT_MAINTENANCE_POLICY,
    private readonly log?: Log,
  ) {}

  start(): void {
    if (this.policy.intervalSeconds <= 0 || this.timer || this.stopped) return;
    this.lastFull = Date.now();
    const { intervalSeconds, busySeconds } = this.policy;
    // The first checks come soon: a first index starts writing right after the server does.
    this.schedule(busySeconds > 0 ? Math.min(busySeconds, intervalSeconds) : intervalSeconds);
  }

  private schedule(seconds: number): void {
    this.timer = setTimeout(() => void this.tick(), Math.max(0, seconds) * 1000);
    this.timer.unref();
  }

  /** One pass now, or the one already running. */
  runOnce(): Promise<MaintenanceRun> {
    if (this.running) return this.running;
    const run = this.pass().finally(() => {
      this.running = undefined;
    });
    this.running = run;
    return run;
  }

  /** Stop, and wait for a pass in progress (the pool must still be open). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /**
   * A full pass once an interval; in between, while rows are being written (and for QUIET_CHECKS checks after),
   * a check for due tables every `busySeconds` (two statistics queries when nothing is due).
   */
  private async tick(): Promise<void> {
    const { intervalSeconds, busySeconds } = this.policy;
    const full = Date.now() - this.lastFull >= intervalSeconds * 1000 - TIMER_SLACK_MS;
    let busy = false;
    try {
      if (full) busy = (await this.runOnce()).busy;
      else if (!this.running) busy = (await this.analyseDue()).busy;
    } catch (err) {
      if (!this.stopped) this.log?.warn({ err }, 'embedded database: maintenance pass failed');
    }
    if (full) this.lastFull = Date.now();
    this.quietChecks = busy ? 0 : this.quietChecks + 1;
    if (this.stopped) return;
    const untilFull = intervalSeconds - (Date.now() - this.lastFull) / 1000;
    const writing = this.quietChecks < QUIET_CHECKS;
    this.schedule(writing && busySeconds > 0 ? Math.min(busySeconds, untilFull) : untilFull);
  }

  private async pass(): Promise<MaintenanceRun> {
    const { analysed, refined, busy } = await this.analyseDue();
    const merged = await this.mergePendingLists();
    if (analysed.length || refined.length || merged.length)
      this.log?.debug({ analysed, refined, merged }, 'embedded database: maintenance');
    return { analysed, refined, merged, busy };
  }

  /**
   * Analyse the tables that are due (over a small sample while rows are being written), and once writing has
   * stopped (REFINE_AFTER_QUIET), in full those last analysed over a sample; `busy` when rows were written since the
   * last check.
   */
  private async analyseDue(): Promise<Pick<MaintenanceRun, 'analysed' | 'refined' | 'busy'>> {
    const { baseRows, scale, minGapSeconds } = this.policy;
    // PostgreSQL's own change counters, flushed from the backend's pending ones first (it flushes them at most once
    // a second, and an idle PGlite never does); reltuples is -1 until a table is first analysed.
    await this.pool.query('SELECT pg_stat_force_next_flush()');
    const tables = await this.pool.query<{
      schemaname: string;
      relname: string;
      due: boolean;
      grown: boolean;
      writes: string;
    }>(
      `SELECT s.schemaname, s.relname, s.n_tup_ins + s.n_tup_upd + s.n_tup_del AS writes,
         g.grown,
         (s.n_mod_since_analyze >= $1::float8 + $2::float8 * greatest(c.reltuples, 0)
          AND (s.last_analyze IS NULL OR s.last_analyze < now() - make_interval(secs => $3::float8) OR g.grown)) AS due
       FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
       CROSS JOIN LATERAL (SELECT s.n_live_tup > 2 * greatest(c.reltuples, 0) AS grown) g
       ORDER BY s.n_mod_since_analyze DESC`,
      [baseRows, scale, minGapSeconds],
    );
    const writes = tables.rows.reduce((n, t) => n + Number(t.writes), 0);
    const busy = writes !== this.lastWrites;
    this.lastWrites = writes;
    this.unwrittenChecks = busy ? 0 : this.unwrittenChecks + 1;
    const settled = this.unwrittenChecks >= REFINE_AFTER_QUIET;
    const name = (t: { schemaname: string; relname: string }) =>
      `${pg.escapeIdentifier(t.schemaname)}.${pg.escapeIdentifier(t.relname)}`;
    const analysed: string[] = [];
    const refined: string[] = [];
    for (const t of tables.rows) {
      if (this.stopped) break;
      const table = name(t);
      const refine = !t.due && settled && this.sampled.has(table);
      if (!t.due && !refine) continue;
      // A simple query of two statements is one transaction: the setting ends with it, as does a failure.
      const columns = busy && t.grown ? await this.plainColumns(table) : undefined;
      const statement = busy
        ? `SET LOCAL default_statistics_target = ${WRITING_STATISTICS_TARGET}; ANALYZE ${table}${columns ? ` (${columns})` : ''}`
        : `ANALYZE ${table}`;
      if (!(await this.quietly(statement, [], t.relname))) continue;
      (refine ? refined : analysed).push(t.relname);
      if (busy) this.sampled.add(table);
      else this.sampled.delete(table);
    }
    return { analysed, refined, busy };
  }

  /**
   * A table's columns (quoted, comma-separated) whose type has no analysis function of its own (pg_type.typanalyze
   * unset: PostgreSQL's standard statistics), or undefined when none has, or the table is gone.
   */
  private async plainColumns(table: string): Promise<string | undefined> {
    try {
      const r = await this.pool.query<{ columns: string | null }>(
        `SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) AS columns
         FROM pg_attribute a JOIN pg_type ty ON ty.oid = a.atttypid
         WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped AND ty.typanalyze::oid = 0`,
        [table],
      );
      return r.rows[0]?.columns ?? undefined;
    } catch {
      return undefined;
    }
  }

  private async mergePendingLists(): Promise<Array<{ index: string; pages: number }>> {
    // GIN indexes buffer inserts unless created WITH (fastupdate = off); an empty list costs one metapage read.
    const gins = await this.pool.query<{ schemaname: string; relname: string }>(
      `SELECT n.nspname AS schemaname, c.relname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
       JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE c.relkind = 'i' AND a.amname = 'gin' AND n.nspname NOT IN ('pg_catalog', 'information_schema')
         AND NOT coalesce('fastupdate=off' = ANY(c.reloptions), false)`,
    );
    const merged: Array<{ index: string; pages: number }> = [];
    for (const g of gins.rows) {
      if (this.stopped) break;
      const name = `${pg.escapeIdentifier(g.schemaname)}.${pg.escapeIdentifier(g.relname)}`;
      const pages = await this.quietly('SELECT gin_clean_pending_list($1::regclass)', [name], g.relname);
      if (typeof pages === 'number' && pages > 0) merged.push({ index: g.relname, pages });
    }
    return merged;
  }

  /**
   * Run one maintenance statement; a table or index dropped since the check (a migration down, a test's teardown)
   * is skipped. Returns the first column of the first row as a number, true when there is none, false on failure.
   */
  private async quietly(statement: string, values: unknown[], target: string): Promise<number | boolean> {
    try {
      const r = await this.pool.query(statement, values);
      const first = r.rows?.[0] ? Object.values(r.rows[0])[0] : undefined;
      return first === undefined ? true : Number(first);
    } catch (err) {
      this.log?.debug({ err, target }, 'embedded database: maintenance statement skipped');
      return false;
    }
  }
}
