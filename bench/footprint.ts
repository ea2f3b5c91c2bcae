// bench/footprint: what the compiled server costs a small machine, each figure from the server in its own
// process (`node dist/src/cli/main.js`, default families, embedded PGlite): resident memory idle on an
// empty vault (one Welcome note) and the peak of its first start on a fresh data directory; idle after a
// restart; the peak while ~10k notes (oldwinter-knowledge-garden ×4) are first indexed, resident with the
// index ready, and after 100 mixed tool calls over HTTP; each split into the main thread's V8 heap, the
// worker threads' heaps, WebAssembly memory (the pages PGlite's touched) and the rest (native: code, Node's own, malloc);
// start → MCP initialize answered over stdio on a fresh data directory, and for `exocortex stdio` relaying
// to a running server (the first relay a server serves, and the next), with the relay's peak resident
// memory. Medians of RUNS runs with min–max.
// The split comes from bench/lib/footprint-probe.cjs, preloaded into the server (worker threads inherit it).
// Usage: tsx bench/footprint.ts   Env: BENCH_COPIES (4: the corpus copies), BENCH_CALLS (100), RUNS (3),
// BENCH_SKIP_CORPUS (1: only the empty-vault and start-up figures), BENCH_ONLY_CORPUS (1: only the corpus figures)
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { benchCorpus } from '../test/fixtures/corpus.js';
import { machine, median, ROOT, servingUrl } from './lib/setup.js';

const COPIES = Number(process.env.BENCH_COPIES ?? 4);
const CALLS = Number(process.env.BENCH_CALLS ?? 100);
const RUNS = Number(process.env.RUNS ?? 3);
const SKIP_CORPUS = process.env.BENCH_SKIP_CORPUS === '1';
const ONLY_CORPUS = process.env.BENCH_ONLY_CORPUS === '1';
const MAIN = path.join(ROOT, 'dist/src/cli/main.js');
const PROBE = path.join(ROOT, 'bench/lib/footprint-probe.cjs');
const MiB = 1048576;
/**
 * How long the server is left alone before an idle figure is read: past the collection it runs itself after
 * 6 s of quiet (src/host/memory-trim.ts), the state a user finds in `top`.
 */
const SETTLE_MS = 12_000;

if (!existsSync(MAIN)) {
  console.error('bench/footprint measures the compiled build: run `npm run build` first');
  process.exit(2);
}

/** VmRSS and VmHWM (the peak) of a process, in bytes. */
function procMemory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

interface ThreadSample {
  threadId: number;
  main: boolean;
  heapPhysical: number;
  external: number;
  wasmSizes: number[];
}

/**
 * The resident part of each WebAssembly memory: V8 maps a memory as one read-write anonymous region of its
 * size (inside a larger reservation), so the region of that size says how much of it was touched.
 */
function wasmResident(pid: number, sizes: number[]): number {
  const regions: Array<{ size: number; rss: number }> = [];
  let current: { size: number; rss: number; anonRw: boolean } | undefined;
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(\S*)/.exec(line);
    if (head) {
      current = {
        size: Number.parseInt(head[2], 16) - Number.parseInt(head[1], 16),
        rss: 0,
        anonRw: head[3] === 'rw-p' && head[4] === '',
      };
      if (current.anonRw) regions.push(current);
    } else if (current && line.startsWith('Rss:')) current.rss = Number(/(\d+)/.exec(line)![1]) * 1024;
  }
  let total = 0;
  for (const size of sizes) {
    const i = regions.findIndex((r) => r.size === size);
    if (i >= 0) total += regions.splice(i, 1)[0].rss;
  }
  return total;
}
interface Split {
  rss: number;
  mainHeap: number;
  workers: number;
  workerHeaps: number;
  wasm: number;
  rest: number;
}

/** Ask the probe in the server for every thread's heap and WebAssembly memory; the rest is native. */
async function split(pid: number, outFile: string): Promise<Split> {
  rmSync(outFile, { force: true });
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 50 && !existsSync(outFile); i++) await sleep(100);
  const { rss } = procMemory(pid);
  const threads = (JSON.parse(readFileSync(outFile, 'utf8')) as { threads: ThreadSample[] }).threads;
  const main = threads.find((t) => t.main)!;
  const others = threads.filter((t) => !t.main);
  const workerHeaps = others.reduce((n, t) => n + t.heapPhysical, 0);
  const wasm = wasmResident(
    pid,
    threads.flatMap((t) => t.wasmSizes),
  );
  return {
    rss,
    mainHeap: main.heapPhysical,
    workers: others.length,
    workerHeaps,
    wasm,
    rest: rss - main.heapPhysical - workerHeaps - wasm,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

async function writeConfig(dir: string, vault: string, db: string): Promise<string> {
  const configFile = path.join(dir, 'config.yaml');
  writeFileSync(
    configFile,
    YAML.stringify({
      vault: { path: vault },
      database: { url: `pglite:${db}` },
      server: { port: await freePort(), host: '127.0.0.1' },
      log: { level: 'info' },
      auth: { mintAdminKeyOnFirstStart: false },
      admin: { socketPath: path.join(dir, 'admin.sock') },
      admission: { callsPerMinute: 10_000_000, writesPerMinute: 10_000_000 },
    }),
  );
  return configFile;
}

interface Served {
  child: ChildProcess;
  url: string;
  probeOut: string;
  readyMs: number;
}

/** Servers still running, ended if the bench fails half-way. */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

async function serve(configFile: string, dir: string): Promise<Served> {
  const probeOut = path.join(dir, `probe-${Date.now()}.json`);
  const t0 = performance.now();
  const child = spawn(process.execPath, ['--require', PROBE, MAIN, 'serve', '--config', configFile], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, FOOTPRINT_PROBE_OUT: probeOut },
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  const url = await servingUrl(child);
  return { child, url, probeOut, readyMs: performance.now() - t0 };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(10_000)]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

/** Start → initialize answered over stdio; the process's peak resident memory when it answered. */
async function stdioInitialize(configFile: string, cwd: string): Promise<{ ms: number; peak: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [MAIN, 'stdio', '--config', configFile], {
    cwd,
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
  };
  child.stdin!.write(`${JSON.stringify(init)}\n`);
  const ms = await new Promise<number>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d) => {
      buf += d;
      if (buf.includes('"id":1')) resolve(performance.now() - t0);
    });
    child.on('exit', (code) => reject(new Error(`stdio exited ${code} before answering`)));
  });
  // What it holds once serving, not only at the answer: a bridge settles within a moment.
  await sleep(500);
  const { peak } = procMemory(child.pid!);
  child.stdin!.end();
  await stop(child);
  return { ms, peak };
}

function cli(args: string[], configFile: string, cwd: string): string {
  const r = spawnSync(process.execPath, [MAIN, ...args, '--config', configFile], { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr.slice(-500)}`);
  return r.stdout.trim();
}

async function waitIndexed(url: string, key: string): Promise<number> {
  for (;;) {
    const res = await fetch(`${url}/health`, { headers: { authorization: `Bearer ${key}` } });
    const health = (await res.json()) as { index?: { ready?: boolean; pending?: number; indexed?: number } };
    if (health.index?.ready && health.index.pending === 0) return Number(health.index.indexed ?? 0);
    await sleep(250);
  }
}

/** CALLS tool calls over HTTP, a mix of reads, searches, listings, links and one append in ten. */
async function mixedCalls(url: string, key: string): Promise<void> {
  const client = new Client({ name: 'bench-footprint', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  // A refusal that says a retry can help (a deadline passed on a busy machine) is retried, a few times.
  const call = async (name: string, args: Record<string, unknown>) => {
    for (let attempt = 0; ; attempt++) {
      const res = (await client.callTool({ name, arguments: args })) as {
        isError?: boolean;
        content?: Array<{ text?: string }>;
        structuredContent?: Record<string, unknown>;
      };
      if (!res.isError || attempt >= 3 || !/"retryable":true/.test(res.content?.[0]?.text ?? '')) return res;
    }
  };
  const listed = (await call('list_notes', { limit: 200 })) as {
    structuredContent?: { notes?: Array<{ path: string }> };
  };
  const paths = (listed.structuredContent?.notes ?? []).map((n) => n.path);
  if (paths.length === 0) throw new Error(`list_notes listed nothing: ${JSON.stringify(listed).slice(0, 500)}`);
  const queries = ['Kubernetes', 'docker network', 'What do my notes say about Redis caching?', '保持健康'];
  const calls: Array<(i: number) => [string, Record<string, unknown>]> = [
    (i) => ['read_note', { path: paths[i % paths.length] }],
    (i) => ['keyword_search', { query: queries[i % queries.length] }],
    (i) => ['get_backlinks', { path: paths[i % paths.length] }],
    (i) => {
      const folder = path.dirname(paths[i % paths.length]);
      return ['list_notes', { limit: 50, ...(folder === '.' ? {} : { folder }) }];
    },
    (i) => ['get_note_outline', { path: paths[i % paths.length] }],
    (i) => ['list_tasks', { limit: 20 }],
    (i) => ['get_tags', {}],
    (i) => ['search', { query: queries[i % queries.length] }],
    (i) => ['get_recent', { limit: 20 }],
    (i) => ['edit_note', { path: paths[i % paths.length], append: true, content: `\nfootprint ${i}\n` }],
  ];
  for (let i = 0; i < CALLS; i++) {
    const [name, args] = calls[i % calls.length](i);
    const res = await call(name, args);
    if (res.isError && name !== 'edit_note') throw new Error(`${name} refused: ${JSON.stringify(res.content)}`);
  }
  await client.close();
}

type Figures = Record<string, number>;

function record(into: Figures, prefix: string, s: Split): void {
  into[`${prefix}_rss`] = s.rss / MiB;
  into[`${prefix}_main_heap`] = s.mainHeap / MiB;
  into[`${prefix}_worker_threads`] = s.workers;
  into[`${prefix}_worker_heaps`] = s.workerHeaps / MiB;
  into[`${prefix}_wasm`] = s.wasm / MiB;
  into[`${prefix}_native_rest`] = s.rest / MiB;
}

/** The empty-vault figures: a first start on a fresh data directory, a restart, the stdio relay, stdio alone. */
async function emptyVaultFigures(dir: string, f: Figures): Promise<void> {
  // An empty vault on a fresh data directory: the server seeds the Welcome note.
  const vault = path.join(dir, 'vault');
  mkdirSync(vault);
  const configFile = await writeConfig(dir, vault, path.join(dir, 'db'));
  const fresh = await serve(configFile, dir);
  f.first_start_ready_ms = fresh.readyMs;
  f.first_start_peak = procMemory(fresh.child.pid!).peak / MiB;
  await sleep(SETTLE_MS);
  record(f, 'idle_empty_fresh', await split(fresh.child.pid!, fresh.probeOut));
  await stop(fresh.child);

  const again = await serve(configFile, dir);
  f.restart_ready_ms = again.readyMs;
  f.restart_peak = procMemory(again.child.pid!).peak / MiB;
  await sleep(SETTLE_MS);
  record(f, 'idle_empty', await split(again.child.pid!, again.probeOut));
  // The first relay a server serves loads the server's side of it; the next ones find it loaded.
  const relay = await stdioInitialize(configFile, dir);
  f.stdio_relay_initialize_ms = relay.ms;
  f.stdio_relay_peak = relay.peak / MiB;
  f.stdio_relay_again_initialize_ms = (await stdioInitialize(configFile, dir)).ms;
  await stop(again.child);

  // `exocortex stdio` serving itself on a fresh data directory (nothing running).
  const direct = path.join(dir, 'direct');
  mkdirSync(path.join(direct, 'vault'), { recursive: true });
  const directConfig = await writeConfig(direct, path.join(direct, 'vault'), path.join(direct, 'db'));
  const standalone = await stdioInitialize(directConfig, direct);
  f.stdio_fresh_initialize_ms = standalone.ms;
}

async function runOnce(): Promise<Figures> {
  const f: Figures = {};
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-bench-footprint-'));
  try {
    if (!ONLY_CORPUS) await emptyVaultFigures(dir, f);
    if (!SKIP_CORPUS) {
      const big = path.join(dir, 'big');
      for (let i = 0; i < COPIES; i++)
        cpSync(benchCorpus('oldwinter-knowledge-garden'), path.join(big, 'vault', `copy${i}`), { recursive: true });
      const bigConfig = await writeConfig(big, path.join(big, 'vault'), path.join(big, 'db'));
      const key = cli(['keys', 'create', '--name', 'bench', '--scope', 'readwrite'], bigConfig, big);
      const indexStart = performance.now();
      const server = await serve(bigConfig, big);
      const notes = await waitIndexed(server.url, key);
      f.corpus_notes = notes;
      f.corpus_index_notes_per_s = notes / ((performance.now() - indexStart) / 1000);
      f.corpus_index_peak = procMemory(server.child.pid!).peak / MiB;
      await sleep(SETTLE_MS);
      record(f, 'corpus_ready', await split(server.child.pid!, server.probeOut));
      await mixedCalls(server.url, key);
      await sleep(SETTLE_MS);
      record(f, 'corpus_after_calls', await split(server.child.pid!, server.probeOut));
      f.corpus_peak = procMemory(server.child.pid!).peak / MiB;
      await stop(server.child);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return f;
}

console.log(
  `# machine: ${machine()}, load ${os.loadavg()[0].toFixed(1)}; compiled server in its own process, embedded PGlite, default families; corpus oldwinter-knowledge-garden x${COPIES}`,
);
const runs: Figures[] = [];
for (let i = 0; i < RUNS; i++) runs.push(await runOnce());
const units: Array<[RegExp, string]> = [
  [/_ms$/, 'ms'],
  [/_worker_threads$|_notes$/, 'threads'],
  [/_per_s$/, 'notes/s'],
];
for (const name of Object.keys(runs[0])) {
  const values = runs.map((r) => r[name]);
  const unit = units.find(([re]) => re.test(name))?.[1] ?? 'MiB';
  const shown = unit === 'threads' && name.endsWith('_notes') ? 'notes' : unit;
  console.log(
    `footprint_${name}: ${median(values).toFixed(0)} ${shown} (median of ${RUNS}, min ${Math.min(...values).toFixed(0)}, max ${Math.max(...values).toFixed(0)})`,
  );
}
