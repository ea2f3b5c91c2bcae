// Database service: the configured engine (open-engine.ts maps the URL to one and opens it) wrapped in Kysely;
// runs host and family migrations.
import { Kysely, Migrator, PostgresDialect, sql, type Migration, type MigrationProvider } from 'kysely';
import type { FamilyMigration } from '../../sdk/types.js';
import { hostMigrations } from '../../../migrations/index.js';
import { embeddedDir, pgliteDir } from './location.js';
import { DEFAULT_MAINTENANCE_POLICY, EmbeddedMaintenance } from './engines/pglite-maintenance.js';
import type { DatabaseEngine } from './engines/types.js';
import { hostEngineOptions, openEngine, type OpenedEngine, type OpenEngineOptions } from './open-engine.js';

export type { DatabaseEngine, OpenedEngine };
export { embeddedDir, hostEngineOptions, pgliteDir };

/** How long queries waited for a pooled connection, and the pool's counts (for /metrics). */
export interface PoolWatch {
  /** Called with each wait for a connection, in seconds. */
  onWait?: (seconds: number) => void;
  counts(): { total: number; idle: number; waiting: number };
}

export interface DatabaseService {
  readonly db: Kysely<any>;
  readonly engine: DatabaseEngine;
  readonly pool: PoolWatch;
  /** The embedded engine's autovacuum stand-in, when it runs in this process (engines/pglite-maintenance.ts). */
  readonly maintenance?: EmbeddedMaintenance;
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions extends OpenEngineOptions {
  /**
   * Seconds between the embedded engine's maintenance passes (ANALYZE, GIN pending lists: PGlite runs no
   * autovacuum); 0 or absent: none (short-lived CLI opens). Ignored for a server, whose autovacuum does it.
   */
  readonly pgliteMaintenanceSeconds?: number;
  readonly log?: OpenEngineOptions['log'] & { debug(obj: object, msg: string): void };
}

/**
 * Open the engine (open-engine.ts: an embedded directory is locked first, so no path through this module can
 * open one PGlite directory from two processes), or take one already `opening` with the same options.
 */
export async function openDatabase(
  url: string,
  options: OpenDatabaseOptions,
  opening: Promise<OpenedEngine> = openEngine(url, options),
): Promise<DatabaseService> {
  const { engine, lock } = await opening;
  const pool = engine.pool;
  const seconds = options.pgliteMaintenanceSeconds ?? 0;
  const maintenance =
    engine.kind === 'pglite' && seconds > 0
      ? new EmbeddedMaintenance(pool, { ...DEFAULT_MAINTENANCE_POLICY, intervalSeconds: seconds }, options.log)
      : undefined;
  maintenance?.start();
  const watch: PoolWatch = {
    counts: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
  };
  // Kysely asks for a connection per query or transaction: timing that call is the pool's wait.
  // node-postgres' pool, once ending, neither serves nor fails the requests still waiting for a connection: a
  // query queued behind another when the database closes (a background load, a call during shutdown) would wait
  // forever. Those are failed here, as a server shutting down fails them (57P01: a retryable refusal for a call).
  const waiting = new Set<(e: Error) => void>();
  const timed = {
    async connect() {
      const t0 = performance.now();
      const acquired = pool.connect();
      let failWait!: (e: Error) => void;
      const closing = new Promise<never>((_, reject) => (failWait = reject));
      waiting.add(failWait);
      try {
        const client = await Promise.race([acquired, closing]);
        watch.onWait?.((performance.now() - t0) / 1000);
        return client;
      } catch (e) {
        // A connection that still comes after its waiter was failed goes back to the pool.
        acquired.then(
          (c) => c.release(),
          () => undefined,
        );
        throw e;
      } finally {
        waiting.delete(failWait);
      }
    },
    end: () => {
      const ended = pool.end();
      const closed = Object.assign(new Error('the database is closing'), { code: '57P01' });
      for (const fail of waiting) fail(closed);
      return ended;
    },
  };
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: timed }) });
  return {
    db,
    engine,
    pool: watch,
    maintenance,
    async ping() {
      try {
        await sql`select 1`.execute(db);
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      await maintenance?.stop();
      await db.destroy().catch(() => undefined);
      await engine.close().catch(() => undefined);
      lock?.release();
    },
  };
}

class RecordMigrationProvider implements MigrationProvider {
  constructor(private readonly migrations: Readonly<Record<string, FamilyMigration>>) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    return { ...this.migrations } as Record<string, Migration>;
  }
}

/** Run migrations recorded in their own table (`exo_migrations_<owner>`). Returns names applied now. */
export async function migrate(
  db: Kysely<any>,
  owner: string,
  migrations: Readonly<Record<string, FamilyMigration>>,
): Promise<string[]> {
  const table = `exo_migrations_${owner.replace(/[^a-z0-9]/g, '_')}`;
  // Fast path: when every migration is recorded, skip the Migrator's lock dance (it costs ~0.5 s on PGlite).
  try {
    const done = await sql<{ name: string }>`select name from ${sql.table(table)}`.execute(db);
    const applied = new Set(done.rows.map((r) => r.name));
    if (Object.keys(migrations).every((name) => applied.has(name))) return [];
  } catch {
    // No table yet: the Migrator creates it.
  }
  const migrator = new Migrator({
    db,
    provider: new RecordMigrationProvider(migrations),
    migrationTableName: table,
    migrationLockTableName: `${table}_lock`,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(
      `migration ${owner}${failed ? `/${failed.migrationName}` : ''} failed: ${(error as Error).message ?? error}`,
    );
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

export function migrateHost(db: Kysely<any>): Promise<string[]> {
  return migrate(db, 'host', hostMigrations);
}
