// bench/writes: write throughput with the server in its own process (as deployed: the compiled build when it is newer
// than the sources, else the sources through the checkout's own loader; bench/lib/setup.ts's serverEntry), per database engine:
// cold index of the vault, then 8 concurrent writers (edit_note append with expected_hash) on distinct
// notes (light ones, then 64 spread over the vault) and on one note, one writer's latency, and 8 readers
// (read_note) as the same-run baseline.
// Usage: tsx bench/writes.ts [engines=pglite,postgres]   Env: BENCH_COPIES (4), BENCH_SECONDS (8),
// BENCH_SERVER_NODE_ARGS (extra node flags for the server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"),
// BENCH_PGLITE_THREAD (1: embedded PGlite on its own thread, the default; 0: on the server's main thread),
// BENCH_LOADER=1 (the sources through the loader even when a fresh build exists).
// The server inherits this environment, so its escape hatches (EXOCORTEX_NATIVE_POOL=1,
// EXOCORTEX_PGLITE_UNNAMED=1) give the same-run baselines docs/performance.md and docs/operations.md quote; BENCH_DEFERRED=0 sets
// index.deferredWrites: false (one transaction per write-through batch); BENCH_HISTORY=0 switches the history
// family off (bench/history compares on and off in one run); BENCH_MAINTENANCE=N sets database.pgliteMaintenanceSeconds: N (0:
// the embedded engine never analyses its tables nor merges GIN pending lists, as before that setting);
// BENCH_COLD_ONLY=1 stops after the cold index figures (for comparing index cost across commits); BENCH_CORPUS=<name>
// indexes copies of another public vault (default oldwinter-knowledge-garden, Chinese; obsidian-tasks-docs is English
// with longer notes); BENCH_SEARCH=0
// switches the search family off and BENCH_KEYWORD_MEMORY=0 its in-memory index (what the search family's index
// costs, measured in the same run); BENCH_SHARED_BUFFERS=N sets database.pgliteSharedBuffersMb and
// BENCH_WORKER_HEAP=N workers.maxHeapMb; BENCH_STATEMENTS=1 adds the PGlite thread's CPU per statement over the
// cold index (the server's EXOCORTEX_PGLITE_PROFILE); BENCH_SERVER_STDOUT=<file> keeps the server's stdout there (what V8's
// --trace-opt or --trace-gc, given through BENCH_SERVER_NODE_ARGS, print).
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { StatementCost } from '../src/host/db/engines/pglite-profile.js';
import { pgliteTemplate } from '../src/host/testing/harness.js';
import { postgresAvailable, startPostgres } from '../src/host/testing/postgres-server.js';
import { benchCorpus } from '../test/fixtures/corpus.js';
import {
  cpuSeconds,
  machine,
  median,
  percentile,
  ROOT,
  serverEntry,
  servingUrl,
  stealMeter,
  threadCpuSeconds,
} from './lib/setup.js';

const COPIES = Number(process.env.BENCH_COPIES ?? 4);
const CORPUS = process.env.BENCH_CORPUS ?? 'oldwinter-knowledge-garden';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const WRITERS = 8;
const COLD_ONLY = process.env.BENCH_COLD_ONLY === '1';
/** BENCH_STATEMENTS=1: the PGlite thread's CPU per statement over the cold index (EXOCORTEX_PGLITE_PROFILE). */
const STATEMENTS = process.env.BENCH_STATEMENTS === '1';
const STATEMENTS_SHOWN = 12;
const SERVER = serverEntry();
const engines = (process.argv[2] ?? 'pglite,postgres').split(',');

type Result = { isError?: boolean; structuredContent?: Record<string, any>; content?: unknown };

function cli(args: string[], configFile: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [...SERVER.argv, ...args, '--config', configFile], {
      cwd: ROOT,
    });
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (err += d));
    c.on('exit', (code) =>
      code === 0 ? resolve(out.trim()) : reject(new Error(`${args.join(' ')} failed: ${err.slice(-500)}`)),
    );
  });
}

async function serve(configFile: string, env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; url: string }> {
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, ...SERVER.argv, 'serve', '--config', configFile], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: [
      'ignore',
      process.env.BENCH_SERVER_STDOUT ? openSync(process.env.BENCH_SERVER_STDOUT, 'w') : 'ignore',
      'pipe',
    ],
  });
  return { child, url: await servingUrl(child, 500) };
}

async function connect(url: string, key: string): Promise<Client> {
  const c = new Client({ name: 'bench-writes', version: '1' });
  await c.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
    }),
  );
  return c;
}

async function call(c: Client, name: string, args: Record<string, unknown>): Promise<Result> {
  return (await c.callTool({ name, arguments: args })) as Result;
}

/** CPU milliseconds (user + system, every thread) a process has used so far, from /proc. */
function cpuMs(pid: number): number {
  return cpuSeconds(pid) * 1000;
}

type Drive = { perSecond: number; latencies: number[]; serverCpuMs: number; clientCpuMs: number };

/**
 * Run each worker until the deadline; returns completed operations per second, their latencies, and the CPU
 * the server process and this (client) process spent per completed operation, so a figure can be read
 * against what the two cores could give.
 */
async function drive(workers: Array<() => Promise<boolean>>, seconds: number, serverPid: number): Promise<Drive> {
  const server0 = cpuMs(serverPid);
  const client0 = cpuMs(process.pid);
  const end = performance.now() + seconds * 1000;
  const latencies: number[] = [];
  let done = 0;
  await Promise.all(
    workers.map(async (w) => {
      while (performance.now() < end) {
        const t0 = performance.now();
        if (await w()) {
          done++;
          latencies.push(performance.now() - t0);
        }
      }
    }),
  );
  return {
    perSecond: done / seconds,
    latencies,
    serverCpuMs: (cpuMs(serverPid) - server0) / Math.max(1, done),
    clientCpuMs: (cpuMs(process.pid) - client0) / Math.max(1, done),
  };
}

const cpuNote = (d: Drive) =>
  `CPU per op: server ${d.serverCpuMs.toFixed(1)} ms, client ${d.clientCpuMs.toFixed(1)} ms`;

const line = (name: string, value: number, unit: string, note = '') =>
  console.log(`${name}: ${value.toFixed(value < 10 ? 2 : 0)} ${unit}${note ? ` (${note})` : ''}`);

async function runEngine(engine: string): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-bench-writes-'));
  let pg: { url: string; stop(): void } | undefined;
  let server: { child: ChildProcess; url: string } | undefined;
  try {
    const vault = path.join(dir, 'vault');
    for (let i = 0; i < COPIES; i++) cpSync(benchCorpus(CORPUS), path.join(vault, `copy${i}`), { recursive: true });
    let url: string;
    if (engine === 'postgres') {
      pg = await startPostgres();
      url = pg.url;
    } else {
      cpSync(await pgliteTemplate(), path.join(dir, 'db'), { recursive: true });
      url = `pglite:${path.join(dir, 'db')}`;
    }
    const configFile = path.join(dir, 'config.yaml');
    writeFileSync(
      configFile,
      YAML.stringify({
        vault: { path: vault },
        database: {
          url,
          pgliteThread: process.env.BENCH_PGLITE_THREAD !== '0',
          ...(process.env.BENCH_MAINTENANCE ? { pgliteMaintenanceSeconds: Number(process.env.BENCH_MAINTENANCE) } : {}),
          ...(process.env.BENCH_SHARED_BUFFERS
            ? { pgliteSharedBuffersMb: Number(process.env.BENCH_SHARED_BUFFERS) }
            : {}),
        },
        server: { port: 0 },
        log: { level: 'info' },
        auth: { mintAdminKeyOnFirstStart: false },
        families: {
          transfer: { enabled: false },
          files: { enabled: false },
          ...(process.env.BENCH_HISTORY === '0' ? { history: { enabled: false } } : {}),
          ...(process.env.BENCH_SEARCH === '0' ? { search: { enabled: false } } : {}),
        },
        ...(process.env.BENCH_KEYWORD_MEMORY === '0' ? { search: { keywordMemory: false } } : {}),
        admission: {
          callsPerMinute: 10_000_000,
          writesPerMinute: 10_000_000,
          concurrency: { read: 64, write: WRITERS },
        },
        index: { deferredWrites: process.env.BENCH_DEFERRED !== '0' },
        ...(process.env.BENCH_WORKER_HEAP ? { workers: { maxHeapMb: Number(process.env.BENCH_WORKER_HEAP) } } : {}),
      }),
    );
    if (engine === 'postgres') await cli(['migrate'], configFile);
    const key = await cli(['keys', 'create', '--name', 'bench', '--scope', 'readwrite'], configFile);
    const t0 = performance.now();
    const steal = stealMeter();
    const statementsFile = path.join(dir, 'statements.json');
    server = await serve(configFile, STATEMENTS ? { EXOCORTEX_PGLITE_PROFILE: statementsFile } : {});
    const pid = server.child.pid!;
    const clients = await Promise.all(Array.from({ length: WRITERS }, () => connect(server!.url, key)));
    // /health carries the index counts and costs nothing (get_vault_stats would read every note).
    let index: { ready?: boolean; pending?: number; indexed?: number } = {};
    for (;;) {
      const health = (await (
        await fetch(`${server.url}/health`, { headers: { authorization: `Bearer ${key}` } })
      ).json()) as { index?: typeof index };
      index = health.index ?? {};
      if (index.ready && index.pending === 0) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const indexSeconds = (performance.now() - t0) / 1000;
    const indexCpuMs = cpuMs(pid);
    const notes = Number(index.indexed ?? 0);
    console.log(`# engine: ${engine}; ${CORPUS} x${COPIES}; all built-in families but files and transfer`);
    line(`${engine}_index_cold_notes`, notes, 'notes');
    line(
      `${engine}_index_cold_notes_per_s`,
      notes / indexSeconds,
      'notes/s',
      'server start to index ready, all contributors',
    );
    line(
      `${engine}_index_cold_server_cpu_per_note`,
      indexCpuMs / Math.max(1, notes),
      'ms',
      'server process CPU (every thread, start-up included) up to index ready: steadier than notes/s on a busy machine',
    );
    // Where that CPU went, per live thread: the main one, then the rest in start order (V8's platform
    // threads, PGlite's, the pool's; Node 20 leaves them unnamed). A thread that already exited is not listed.
    line(
      `${engine}_index_cold_steal`,
      steal() * 100,
      '%',
      "of the machine's CPU time its hypervisor took for others during the index (/proc/stat): much of it, a busy host",
    );
    const threads = threadCpuSeconds(pid);
    console.log(
      `${engine}_index_cold_thread_cpu_s: main ${threads.main.toFixed(1)}; others ${threads.others.map((s) => s.toFixed(1)).join(' ')} (CPU-s up to index ready)`,
    );
    if (STATEMENTS && engine === 'pglite') {
      // The thread rewrites its profile every second (src/host/db/engines/pglite-profile.ts): this is the one
      // written about a second after ready.
      await new Promise((r) => setTimeout(r, 1100));
      // Only PGlite's own thread profiles (BENCH_PGLITE_THREAD=0 leaves no file).
      const costs = existsSync(statementsFile)
        ? (JSON.parse(readFileSync(statementsFile, 'utf8')) as StatementCost[])
        : [];
      const total = costs.reduce((n, c) => n + c.cpuMs, 0);
      console.log(
        `${engine}_index_cold_statements_cpu_s: ${(total / 1000).toFixed(1)} (PGlite's thread inside the engine, up to about a second after ready; the costliest statements follow)`,
      );
      for (const c of costs.slice(0, STATEMENTS_SHOWN)) {
        console.log(`  ${c.cpuMs.toFixed(0).padStart(6)} ms ${String(c.calls).padStart(5)}×  ${c.text.slice(0, 150)}`);
      }
    }
    if (COLD_ONLY) {
      await Promise.all(clients.map((c) => c.close()));
      return;
    }

    const listed = (await call(clients[0], 'list_notes', { limit: 200 })).structuredContent as {
      notes?: Array<{ path: string }>;
      rows?: Array<{ path: string }>;
    };
    const paths = (listed.notes ?? listed.rows ?? []).map((n) => n.path).filter((p) => !p.includes(' '));
    // A second set spread evenly over the whole vault (by path): its notes are the vault's mix, with more
    // frontmatter, code and length than the light ones above, so each write costs more to parse and index.
    const all: string[] = [];
    let cursor: string | undefined;
    do {
      const page = (
        await call(clients[0], 'list_notes', { limit: 500, order_by: 'path', ...(cursor ? { cursor } : {}) })
      ).structuredContent as { notes: Array<{ path: string }>; next_cursor?: string };
      all.push(...page.notes.map((n) => n.path));
      cursor = page.next_cursor;
    } while (cursor);
    const spread = Array.from({ length: WRITERS * 8 }, (_, i) => all[Math.floor((i * all.length) / (WRITERS * 8))]);
    if (paths.length < WRITERS * 4) throw new Error(`list_notes gave ${paths.length} paths`);
    // Each writer's own notes (up to 8; fewer when the first listing page is short — never none, see above).
    const owned = Array.from({ length: WRITERS }, (_, w) => paths.filter((_, i) => i % WRITERS === w).slice(0, 8));
    const own = (w: number, k: number) => owned[w][k % owned[w].length];

    const reads = await drive(
      clients.map((c, w) => {
        let i = 0;
        return async () => !(await call(c, 'read_note', { path: own(w, i++) })).isError;
      }),
      SECONDS,
      pid,
    );
    line(
      `${engine}_read_note_8_readers`,
      reads.perSecond,
      'reads/s',
      `same-run baseline: the request path without a write; ${cpuNote(reads)}`,
    );

    const hashes = new Map<string, string>();
    const info = (await call(clients[0], 'get_notes_info', { paths: paths.slice(0, WRITERS * 8) }))
      .structuredContent as { notes: Array<{ path: string; content_hash: string }> };
    for (const n of info.notes) hashes.set(n.path, n.content_hash);
    const spreadInfo = (await call(clients[0], 'get_notes_info', { paths: spread })).structuredContent as {
      notes: Array<{ path: string; content_hash: string }>;
    };
    for (const n of spreadInfo.notes) hashes.set(n.path, n.content_hash);
    const appendTo = async (c: Client, p: string): Promise<boolean> => {
      const r = await call(c, 'edit_note', {
        path: p,
        content: `\nbench line ${Date.now()}`,
        append: true,
        expected_hash: hashes.get(p),
      });
      const out = r.structuredContent;
      if (r.isError || !out?.content_hash) {
        const fresh = (await call(c, 'get_notes_info', { paths: [p] })).structuredContent as {
          notes: Array<{ content_hash: string }>;
        };
        hashes.set(p, fresh.notes[0].content_hash);
        return false;
      }
      hashes.set(p, out.content_hash);
      return true;
    };
    const single = await drive([() => appendTo(clients[0], own(0, 0))], Math.max(2, SECONDS / 2), pid);
    line(`${engine}_edit_note_1_writer_p50`, median(single.latencies), 'ms');
    const distinct = await drive(
      clients.map((c, w) => {
        let i = 0;
        return () => appendTo(c, own(w, i++));
      }),
      SECONDS,
      pid,
    );
    line(
      `${engine}_edit_note_8_writers_distinct`,
      distinct.perSecond,
      'writes/s',
      `p50 ${median(distinct.latencies).toFixed(1)} ms, p95 ${percentile(distinct.latencies, 95).toFixed(1)} ms; ${cpuNote(distinct)}; goal >= 300`,
    );
    line(`${engine}_writes_vs_reads_ratio`, distinct.perSecond / reads.perSecond, 'x');
    const mixed = await drive(
      clients.map((c, w) => {
        let i = 0;
        const mine = spread.filter((_, k) => k % WRITERS === w);
        return () => appendTo(c, mine[i++ % mine.length]);
      }),
      SECONDS,
      pid,
    );
    line(
      `${engine}_edit_note_8_writers_distinct_spread`,
      mixed.perSecond,
      'writes/s',
      `64 notes spread over the vault; p50 ${median(mixed.latencies).toFixed(1)} ms, p95 ${percentile(mixed.latencies, 95).toFixed(1)} ms; ${cpuNote(mixed)}`,
    );
    const one = await drive(
      clients.map((c) => () => appendTo(c, own(0, 1))),
      SECONDS,
      pid,
    );
    line(
      `${engine}_edit_note_8_writers_one_note`,
      one.perSecond,
      'writes/s',
      'losers of each race re-read the hash and retry',
    );
    await Promise.all(clients.map((c) => c.close()));
  } finally {
    server?.child.kill('SIGTERM');
    if (server) await new Promise((r) => server!.child.once('exit', r));
    pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(
  `# machine: ${machine()}; server in its own process (${SERVER.compiled ? 'the compiled build' : "the sources through the checkout's loader: no build newer than them"}), clients in this one over HTTP; ${SECONDS} s per figure`,
);
for (const engine of engines) {
  if (engine === 'postgres' && !postgresAvailable()) {
    console.log('postgres: unavailable (no PostgreSQL server binaries)');
    continue;
  }
  await runEngine(engine);
}
