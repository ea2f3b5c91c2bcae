// Server engine: a real PostgreSQL (≥ 15) through a node-postgres pool. pgvector is optional: it is
// detected, never required by the host.
import pg from 'pg';
import type { DatabaseEngine } from './types.js';

export async function openPostgres(url: string, poolSize: number): Promise<DatabaseEngine> {
  const probe = new pg.Client({ connectionString: url });
  await probe.connect();
  let hasVector = false;
  try {
    const avail = await probe.query(`SELECT 1 FROM pg_available_extensions WHERE name = 'vector'`);
    if (avail.rowCount) {
      await probe.query('CREATE EXTENSION IF NOT EXISTS vector');
      hasVector = true;
    }
  } catch {
    hasVector = false;
  }
  try {
    await probe.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
  } catch {
    // pg_trgm is optional for the host; families that need it say so.
  }
  await probe.end();
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  pool.on('error', () => {
    // An idle client died (server restart); the pool replaces it on next use.
  });
  const u = new URL(url);
  return {
    kind: 'postgres',
    pool,
    hasVector,
    description: `postgres ${u.hostname}:${u.port || 5432}${u.pathname}`,
    async listen(channel, onNotify) {
      // A connection of its own: LISTEN holds its session, which a pooled client would hand back.
      const client = new pg.Client({ connectionString: url });
      client.on('error', () => undefined);
      client.on('notification', (n) => n.channel === channel && onNotify());
      await client.connect();
      await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      return () => client.end().catch(() => undefined);
    },
    async close() {
      if (!(pool as unknown as { ended: boolean }).ended) await pool.end().catch(() => undefined);
    },
  };
}
