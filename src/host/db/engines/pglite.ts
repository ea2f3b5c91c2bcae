// Embedded engine: PGlite (Postgres in WASM, in-process) behind node-postgres' Pool interface, so the
// one Kysely PostgresDialect code path serves it. Pool size stays at the bridge's 1 (more corrupts).
import { mkdirSync } from 'node:fs';
import { setImmediate as yieldLoop } from 'node:timers/promises';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import { vector } from '@electric-sql/pglite-pgvector';
import pg from 'pg';
import type { DatabaseEngine } from './types.js';

export async function openPglite(dataDir: string): Promise<DatabaseEngine> {
  const memory = dataDir.startsWith('memory://');
  if (!memory) mkdirSync(dataDir, { recursive: true });
  const pglite = await PGlite.create({ dataDir, extensions: { vector, pg_trgm } });
  await pglite.exec('CREATE EXTENSION IF NOT EXISTS vector; CREATE EXTENSION IF NOT EXISTS pg_trgm;');
  const pool = new pg.Pool(createPgConfig(pglite) as unknown as pg.PoolConfig);
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
  return {
    kind: 'pglite',
    pool,
    hasVector: true,
    description: memory ? 'pglite (in memory)' : 'pglite (embedded)',
    async close() {
      if (!(pool as unknown as { ended: boolean }).ended) await pool.end().catch(() => undefined);
      await pglite.close();
    },
  };
}
