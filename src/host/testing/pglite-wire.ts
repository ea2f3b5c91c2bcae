// Test harness: PGlite (with pgvector and pg_trgm) served over the PostgreSQL wire protocol on a
// loopback port, so the server engine's `pg` + pgvector path runs where no native pgvector exists.
import { freePort } from './free-port.js';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export async function startPgliteWire(): Promise<{ url: string; stop(): Promise<void> }> {
  const db = await PGlite.create({ dataDir: 'memory://', extensions: { vector, pg_trgm } });
  const port = await freePort();
  // A pool needs more than the default single connection; queries are multiplexed onto PGlite.
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port, maxConnections: 8 });
  await server.start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
