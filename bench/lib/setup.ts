// Shared bench setup: a temp vault + migrated PGlite data dir + config file, and median helpers.
import type { ChildProcess } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import YAML from 'yaml';
import { pgliteTemplate } from '../../src/host/testing/harness.js';

export const ROOT = path.resolve(import.meta.dirname, '../..');
export const ECHO_FAMILY = path.join(ROOT, 'test/fixtures/families/echo');

/**
 * How a checkout's TypeScript is loaded in a server process a bench starts: the checkout's own loader
 * (scripts/ts-loader: esbuild per file, as `tsc` emits it), or tsx where it has none (an older checkout as a
 * baseline). tsx keeps function names by wrapping every function made at run time in a naming call, a cost
 * the compiled server never pays.
 */
export function serverLoader(root = ROOT): string {
  const own = path.join(root, 'scripts/ts-loader/register.mjs');
  return existsSync(own) ? pathToFileURL(own).href : 'tsx';
}

/** Sources a build compiles: a file here newer than the build means the build is not what the checkout holds. */
const SOURCE_DIRS = ['src', 'plugins', 'migrations', 'schemas'];

function newestSourceMs(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'generated') newest = Math.max(newest, newestSourceMs(p));
    } else newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * The node arguments that start this checkout's CLI in a bench's server process: its compiled build, which is
 * what `npm start` and `exocortex` run, when `npm run build` emitted it after the sources last changed; else
 * (no build, a stale one, or BENCH_LOADER=1) the sources through the checkout's loader, which also pays
 * esbuild's transform of every module at start. A stale build is never measured.
 */
export function serverEntry(): { readonly argv: readonly string[]; readonly compiled: boolean } {
  const main = path.join(ROOT, 'dist/src/cli/main.js');
  const built = process.env.BENCH_LOADER !== '1' && existsSync(main) ? statSync(main).mtimeMs : 0;
  const fresh =
    built > 0 &&
    SOURCE_DIRS.every((d) => !existsSync(path.join(ROOT, d)) || newestSourceMs(path.join(ROOT, d)) <= built);
  return fresh
    ? { argv: [main], compiled: true }
    : { argv: ['--import', serverLoader(), path.join(ROOT, 'src/cli/main.ts')], compiled: false };
}

/** A temporary vault, database and config; `migrated: false` leaves the database to the server's first start. */
export async function benchEnvironment(
  extra: Record<string, unknown> = {},
  { migrated = true }: { migrated?: boolean } = {},
): Promise<{ dir: string; configFile: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-bench-'));
  mkdirSync(path.join(dir, 'vault'));
  writeFileSync(path.join(dir, 'vault', 'Welcome.md'), '# hi\n');
  if (migrated) cpSync(await pgliteTemplate(), path.join(dir, 'db'), { recursive: true });
  const configFile = path.join(dir, 'config.yaml');
  writeFileSync(
    configFile,
    YAML.stringify({
      vault: { path: path.join(dir, 'vault') },
      database: { url: `pglite:${path.join(dir, 'db')}` },
      server: { port: 0 },
      log: { level: 'warn' },
      auth: { mintAdminKeyOnFirstStart: false },
      admission: { callsPerMinute: 10_000_000, concurrency: { read: 64 } },
      ...extra,
    }),
  );
  return { dir, configFile };
}

/** Clock ticks a second in /proc's CPU times (USER_HZ, 100 on Linux). */
const CLOCK_TICKS = 100;

/** CPU seconds used so far (utime + stime from /proc) by a process, every thread, or by one thread of it. */
export function cpuSeconds(pid: number, tid?: number): number {
  const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/**
 * From now on, the share of this machine's CPU time its hypervisor took for others (steal, from /proc/stat):
 * call the returned function at the end of a figure. A run with much of it measured a busy host, not the code.
 */
export function stealMeter(): () => number {
  const read = () => {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    return { steal: f[7] ?? 0, total: f.slice(0, 8).reduce((a, b) => a + b, 0) };
  };
  const a = read();
  return () => {
    const b = read();
    return b.total > a.total ? (b.steal - a.steal) / (b.total - a.total) : 0;
  };
}

/** CPU seconds of each live thread of a process: the main thread, and the others (at least 0.05) by id. */
export function threadCpuSeconds(pid: number): { main: number; others: number[] } {
  const others: number[] = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)
    .map(Number)
    .sort((a, b) => a - b)) {
    if (tid === pid) continue;
    try {
      const s = cpuSeconds(pid, tid);
      if (s >= 0.05) others.push(s);
    } catch {
      // the thread exited while being read
    }
  }
  return { main: cpuSeconds(pid, pid), others };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

export function machine(): string {
  return `${os.cpus().length} cores ${os.cpus()[0]?.model ?? ''}, Node ${process.version}`.trim();
}

/**
 * The base URL (`http://host:port`, no `/mcp`) an `exocortex serve` child logs once it serves, read from its
 * stderr (spawned with stderr piped); rejects with the log's tail when the child exits first.
 */
export function servingUrl(child: ChildProcess, tail = 800): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d) => {
      err += d;
      const m = /"url":"(http:\/\/[^"]+)\/mcp"/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${err.slice(-tail)}`)));
  });
}
