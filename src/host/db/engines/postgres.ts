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
  // Bounded: a query waits at most POOL_WAIT_MS for a connection (a full pool, or a server that does not
  // answer) and then fails as the database being unavailable, never holding its caller indefinitely.
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: POOL_WAIT_MS,
    keepAlive: true,
  });
  pool.on('error', () => {
    // An idle client died (server restart); the pool replaces it on next use.
  });
  // A checked-out client whose connection dies between queries (a server restart mid-transaction) emits
  // 'error' with no pool listener attached: without one of its own that is an uncaught exception that
  // ends the process. Its query in flight still fails, and the pool discards the dead client on release.
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
  });
  const u = new URL(url);
  return {
    kind: 'postgres',
    pool,
    hasVector,
    description: `postgres ${u.hostname}:${u.port || 5432}${u.pathname}`,
    async listen(channel, onNotify) {
      // A connection of its own: LISTEN holds its session, which a pooled client would hand back. It is
      // reconnected whenever it drops (a server restart), with a flush, since NOTIFYs sent meanwhile are lost.
      let stopped = false;
      let client: pg.Client | undefined;
      let retry: NodeJS.Timeout | undefined;
      let delay = LISTEN_RETRY_MIN_MS;
      const connect = async (): Promise<void> => {
        const c = new pg.Client({ connectionString: url, keepAlive: true });
        const lost = () => {
          if (client !== c) return;
          client = undefined;
          void c.end().catch(() => undefined);
          if (stopped) return;
          retry = setTimeout(() => void reconnect(), delay);
          retry.unref();
          delay = Math.min(delay * 2, LISTEN_RETRY_MAX_MS);
        };
        c.on('error', lost);
        c.on('end', lost);
        c.on('notification', (n) => n.channel === channel && onNotify(n.payload || undefined));
        client = c;
        try {
          await c.connect();
          await c.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
        } catch (e) {
          lost();
          throw e;
        }
        delay = LISTEN_RETRY_MIN_MS;
      };
      const reconnect = async () => {
        if (stopped) return;
        try {
          await connect();
          onNotify(undefined);
        } catch {
          // lost() scheduled the next try.
        }
      };
      await connect();
      return async () => {
        stopped = true;
        clearTimeout(retry);
        const c = client;
        client = undefined;
        await c?.end().catch(() => undefined);
      };
    },
    async close() {
      if (!(pool as unknown as { ended: boolean }).ended) await pool.end().catch(() => undefined);
    },
  };
}

/** The longest a query waits for a pooled connection (connecting included). */
const POOL_WAIT_MS = 15_000;

/** Backoff of a lost LISTEN connection's reconnects. */
const LISTEN_RETRY_MIN_MS = 250;
const LISTEN_RETRY_MAX_MS = 5000;
