// The narrow interface both database engines implement; callers never branch on which one they have.
import type pg from 'pg';

export interface DatabaseEngine {
  readonly kind: 'pglite' | 'postgres';
  /** A node-postgres pool (for PGlite: the bridge with exactly one connection). */
  readonly pool: pg.Pool;
  /** Whether pgvector is available (`CREATE EXTENSION vector` can succeed). */
  readonly hasVector: boolean;
  /** A one-line, secret-free description for logs and /health. */
  readonly description: string;
  /**
   * Call onNotify for each NOTIFY on channel sent by any process sharing this database (with its
   * payload), until the returned stop is called. A lost listening connection is reconnected, and then
   * onNotify(undefined) runs once: notifications may have been missed, so caches must be flushed.
   * Embedded PGlite has no other process, so there it never fires.
   */
  listen(channel: string, onNotify: (payload: string | undefined) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}
