// Embedded engine: PGlite (Postgres in WASM, in-process) behind node-postgres' Pool interface, so the
// one Kysely PostgresDialect code path serves it. Pool size stays at the bridge's 1 (more corrupts).
// By default PGlite runs on its own worker thread (pglite-threaded.ts); `thread: false` keeps it on the
// calling thread, where each statement blocks the event loop while it executes.
import { mkdirSync } from 'node:fs';
import { setImmediate as yieldLoop } from 'node:timers/promises';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { vector } from '@electric-sql/pglite-pgvector';
import pg from 'pg';
import { pgliteConfig } from './pglite-connection.js';
import { DEFAULT_PGLITE_MEMORY, memoryStartParams, type PgliteMemory } from './pglite-memory.js';
import { defaultSeedSources, type Seeded, type SeedSources, seedDataDir } from './pglite-template.js';
import { ThreadedPglite } from './pglite-threaded.js';
import { nameStatements } from './statement-cache.js';
import type { DatabaseEngine } from './types.js';

export type { PgliteMemory };

export interface OpenPgliteOptions {
  /** On its own worker thread (default) or on the calling one. */
  readonly thread?: boolean;
  readonly memory?: PgliteMemory;
  /** Where a new data directory's initialised contents come from (default: pglite-template.ts's). */
  readonly seed?: SeedSources;
  readonly log?: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

export async function openPglite(dataDir: string, options: OpenPgliteOptions = {}): Promise<DatabaseEngine> {
  const memory = dataDir.startsWith('memory://');
  const thread = options.thread ?? true;
  const seed = memory ? undefined : (options.seed ?? defaultSeedSources());
  const report = (seeded: Seeded) => {
    if (seeded.from === 'archive')
      options.log?.info({ dataDir }, 'database: a new data directory, seeded from the packaged initialised one');
    if (seeded.problem)
      options.log?.warn(
        { dataDir, problem: seeded.problem },
        'database: the packaged archive is unusable; running initdb',
      );
  };
  if (!memory) mkdirSync(dataDir, { recursive: true });
  // On its own thread the engine's thread fills a new directory; here, this one does.
  if (seed && !thread) report(await seedDataDir(dataDir, seed));
  const where = memory ? 'in memory' : 'embedded';
  const startParams = [...PGlite.defaultStartParams, ...memoryStartParams(options.memory ?? DEFAULT_PGLITE_MEMORY)];
  if (thread) {
    const threaded = new ThreadedPglite(dataDir, startParams, seed);
    try {
      await threaded.waitReady;
    } catch (e) {
      await threaded.close();
      throw e;
    }
    report(threaded.seeded);
    const pool = new pg.Pool(pgliteConfig(threaded));
    nameStatements(pool);
    return engine(pool, `pglite (${where}, own thread)`, () => threaded.close());
  }
  const pglite = await PGlite.create({ dataDir, extensions: { vector, pg_trgm }, startParams });
  await pglite.exec('CREATE EXTENSION IF NOT EXISTS vector; CREATE EXTENSION IF NOT EXISTS pg_trgm;');
  const pool = new pg.Pool(pgliteConfig(pglite));
  nameStatements(pool);
  // PGlite executes each statement synchronously on this thread: without a turn of the event loop
  // between statements, a long transaction holds every socket and file callback until it commits.
  pool.on('connect', (client) => {
    const run = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const r = run(...args);
      if (!(r instanceof Promise)) return r;
      return r.then(async (v) => {
        await yieldLoop();
        return v;
      });
    };
  });
  return engine(pool, `pglite (${where})`, () => pglite.close());
}

function engine(pool: pg.Pool, description: string, closeDatabase: () => Promise<void>): DatabaseEngine {
  return {
    kind: 'pglite',
    pool,
    hasVector: true,
    description,
    // One process owns the directory (its lock), so no other process can NOTIFY it.
    async listen() {
      return async () => undefined;
    },
    async close() {
      if (!(pool as unknown as { ended: boolean }).ended) await pool.end().catch(() => undefined);
      await closeDatabase();
    },
  };
}
