// Starts a throwaway native PostgreSQL (the machine's server binaries) on a free loopback port for
// tests of the server engine; as root it runs initdb/pg_ctl as the `postgres` user, which PG requires.
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { freePort } from './free-port.js';
import os from 'node:os';
import path from 'node:path';

const PGBIN = '/usr/lib/postgresql/15/bin';

export function postgresAvailable(): boolean {
  return existsSync(path.join(PGBIN, 'initdb')) && existsSync(path.join(PGBIN, 'pg_ctl'));
}

export interface TestPostgres {
  readonly url: string;
  /** The server's data and log folder. */
  readonly dir: string;
  /**
   * Stop it now, as a crash would (`-m immediate`), and start it again on the same data and port after
   * `downMs`. Asynchronous, so clients in this process keep running (and failing) meanwhile.
   */
  restart(downMs?: number): Promise<void>;
  stop(): void;
}

/** `durable`: fsync and synchronous commit on, as a production server runs (tests of lost writes). */
export async function startPostgres(options: { durable?: boolean } = {}): Promise<TestPostgres> {
  const run = mkdtempSync(path.join(os.tmpdir(), 'exo-pg-'));
  const data = path.join(run, 'data');
  const port = await freePort();
  const asRoot = process.getuid?.() === 0;
  const exec = (bin: string, args: string[]) =>
    asRoot
      ? execFileSync('runuser', ['-u', 'postgres', '--', path.join(PGBIN, bin), ...args], { stdio: 'pipe' })
      : execFileSync(path.join(PGBIN, bin), args, { stdio: 'pipe' });
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(run, uid, gid);
  }
  exec('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync']);
  const sync = options.durable ? 'on' : 'off';
  const execAsync = (bin: string, args: string[]) =>
    asRoot
      ? promisify(execFile)('runuser', ['-u', 'postgres', '--', path.join(PGBIN, bin), ...args])
      : promisify(execFile)(path.join(PGBIN, bin), args);
  const startArgs = () => [
    '-D',
    data,
    '-l',
    path.join(run, 'pg.log'),
    '-w',
    '-t',
    '30',
    '-o',
    `-p ${port} -k ${run} -c listen_addresses=127.0.0.1 -c fsync=${sync} -c synchronous_commit=${sync} -c max_connections=200`,
    'start',
  ];
  exec('pg_ctl', startArgs());
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dir: run,
    async restart(downMs = 0) {
      await execAsync('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      await new Promise((r) => setTimeout(r, downMs));
      await execAsync('pg_ctl', startArgs());
    },
    stop() {
      try {
        exec('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(run, { recursive: true, force: true });
      }
    },
  };
}
