// Test harness: PGlite (with pgvector and pg_trgm) served over the PostgreSQL wire protocol on a
// loopback port, so the server engine's `pg` + pgvector path runs where no native pgvector exists.
import { freePort } from './free-port.js';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface PgliteWire {
  readonly url: string;
  /**
   * The server's settings for this engine. One connection: pglite-socket serves every connection from one PGlite
   * session, so concurrent connections' protocol exchanges can interleave there (a result handed to the wrong
   * query). Slow lease rounds: the lease connection's statements wait behind everyone's in that one session, and
   * a lease connection counted lost cannot free its session's advisory locks there (every connection shares the
   * session), so the process would never own its vault again; 10 s rounds allow a 60 s lease statement.
   */
  readonly config: { database: { url: string; poolSize: number }; cluster: { leaseIntervalMs: number } };
  stop(): Promise<void>;
}

export async function startPgliteWire(): Promise<PgliteWire> {
  const db = await PGlite.create({ dataDir: 'memory://', extensions: { vector, pg_trgm } });
  const port = await freePort();
  // A pool needs more than the default single connection; queries are multiplexed onto PGlite.
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port, maxConnections: 8 });
  await server.start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    url,
    config: { database: { url, poolSize: 1 }, cluster: { leaseIntervalMs: 10_000 } },
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
