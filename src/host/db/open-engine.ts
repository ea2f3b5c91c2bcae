// The engine behind a database URL, opened apart from the database service around it (db/index.ts: Kysely,
// migrations), so that a command can start the embedded engine's thread before it loads the host's modules
// and both proceed at once. An embedded directory is locked first (owner-lock.ts).
import { openPglite, type PgliteMemory } from './engines/pglite.js';
import { openPostgres } from './engines/postgres.js';
import type { DatabaseEngine } from './engines/types.js';
import { embeddedDir, pgliteDir } from './location.js';
import { acquireOwnerLock, type OwnerLock } from './owner-lock.js';

export interface OpenedEngine {
  readonly engine: DatabaseEngine;
  /** The embedded directory's lock, released when the database closes. */
  readonly lock?: OwnerLock;
}

export interface OpenEngineOptions {
  readonly baseDir: string;
  /** Connections for the server engine. */
  readonly poolSize?: number;
  /** Run embedded PGlite on its own worker thread (default) rather than on the event loop's thread. */
  readonly pgliteThread?: boolean;
  /** The embedded engine's memory settings (engines/pglite-memory.ts); absent: its defaults. */
  readonly pgliteMemory?: PgliteMemory;
  readonly log?: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/** The embedded engine's memory settings from the `database` settings section. */
export function pgliteMemoryOf(d: {
  pgliteSharedBuffersMb: number;
  pgliteWalBuffersKb: number;
  pgliteWorkMemMb: number;
  pgliteMaintenanceWorkMemMb: number;
}): PgliteMemory {
  return {
    sharedBuffersMb: d.pgliteSharedBuffersMb,
    walBuffersKb: d.pgliteWalBuffersKb,
    workMemMb: d.pgliteWorkMemMb,
    maintenanceWorkMemMb: d.pgliteMaintenanceWorkMemMb,
  };
}

/** Lock (embedded) and open; DatabaseLockedError when another process owns the directory. */
export async function openEngine(url: string, options: OpenEngineOptions): Promise<OpenedEngine> {
  const dir = embeddedDir(url, options.baseDir);
  const lock = dir ? await acquireOwnerLock(dir) : undefined;
  try {
    const engine = url.startsWith('pglite:')
      ? await openPglite(pgliteDir(url, options.baseDir), {
          thread: options.pgliteThread ?? true,
          memory: options.pgliteMemory,
          log: options.log,
        })
      : await openPostgres(url, options.poolSize ?? 10);
    return { engine, lock };
  } catch (e) {
    lock?.release();
    throw e;
  }
}

/** What a host with these settings opens (host.ts, the commands that open the database themselves: cli/). */
export function hostEngineOptions<L extends OpenEngineOptions['log'] = undefined>(
  settings: {
    readonly baseDir: string;
    readonly host: {
      readonly database: Parameters<typeof pgliteMemoryOf>[0] & { poolSize: number; pgliteThread: boolean };
    };
  },
  log?: L,
): Omit<OpenEngineOptions, 'log'> & { readonly log?: L } {
  const d = settings.host.database;
  return {
    baseDir: settings.baseDir,
    poolSize: d.poolSize,
    pgliteThread: d.pgliteThread,
    pgliteMemory: pgliteMemoryOf(d),
    log,
  };
}
