// bench/roundtrip: tool calls per second for a trivial read tool (the fixture family's `echo`), per
// protocol era (2025-11-25 with a session, 2026-07-28) and transport (Streamable HTTP with 1 and 16
// concurrent clients, stdio with 1), each as a ratio to the MCP SDK's bare server serving the same echo
// tool in the same run (bench/lib/bare-mcp-server.ts: no auth, admission, audit or families), and over HTTP
// the server process's CPU per call (every thread, from /proc: steadier than calls/s on a shared machine; over stdio
// too, the client's child).
// Servers run in their own processes, the clients in this one. A server's TypeScript is loaded by its
// checkout's own loader (scripts/ts-loader: esbuild per file, as tsc emits it), not tsx: tsx keeps
// function names by wrapping every function made at run time in a naming call, a per-call cost the
// compiled server never pays (it cut the stdio figure by a third). A baseline without that loader runs under tsx.
// Usage: tsx bench/roundtrip.ts
// Env: SECONDS (default 5) seconds per figure, after each client's first answer and 2 s of warm-up; WARM_SECONDS
// (default 10) seconds of calls each server process serves before its first figure; ROUNDS (default 3) figures per
// cell, of which the median is printed (rounds alternate between the servers); BENCH_BASELINE=<another
// checkout with its node_modules> serves the same tool from that commit as well, in the same rounds, and adds
// each cell's ratio to it (how a change moved the per-call cost, on the same machine at the same time).
import { spawn, type ChildProcess } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  benchEnvironment,
  cpuSeconds,
  ECHO_FAMILY,
  machine,
  median,
  ROOT,
  serverLoader,
  servingUrl,
} from './lib/setup.js';

// The 2025-era HTTP client (SDK v1) leaves an abort listener on its transport's signal per request; past Node's
// default of 1,500 this process's stderr filled with MaxListenersExceededWarning, thousands a run. Not a server's
// doing: the warnings are switched off, the calls are as they were.
setMaxListeners(0);

const SECONDS = Number(process.env.SECONDS ?? 5);
/** Seconds of calls, after each client's first answer, before a figure is taken. */
const FIGURE_WARM_SECONDS = 2;
/**
 * Seconds of calls a server process serves before its first figure, in each era: V8 compiles a request
 * path's hot functions over its first seconds of calls (Exocortex's path is longer than the bare server's, so
 * its compiling lasts longer), and a server serves for hours. HTTP servers get it once, a stdio server
 * (a new process per figure) before each figure. 0: figures from a cold process, as before.
 */
const WARM_SECONDS = Number(process.env.WARM_SECONDS ?? 10);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const BARE = path.join(ROOT, 'bench/lib/bare-mcp-server.ts');
const BASELINE = process.env.BENCH_BASELINE ? path.resolve(process.env.BENCH_BASELINE) : undefined;

/** A checkout's CLI entry (it moved from src/host/cli to src/cli). */
function cliOf(root: string): string {
  const moved = path.join(root, 'src/cli/main.ts');
  return existsSync(moved) ? moved : path.join(root, 'src/host/cli/main.ts');
}

type Era = 'legacy' | 'modern';
type Name = 'exocortex' | 'baseline' | 'bare';
interface Caller {
  callTool(req: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
  close(): Promise<void>;
}
interface Target {
  readonly name: Name;
  /** The HTTP server's process, for its CPU. */
  readonly pid?: number;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly stdioArgs: string[];
}

async function exocortex(
  configFile: string,
  root = ROOT,
  name: Name = 'exocortex',
): Promise<{ child: ChildProcess; target: Target }> {
  const CLI = cliOf(root);
  const LOADER = serverLoader(root);
  const key = await new Promise<string>((resolve, reject) => {
    const c = spawn(
      process.execPath,
      ['--import', 'tsx', CLI, 'keys', 'create', '--name', 'bench', '--scope', 'read', '--config', configFile],
      { cwd: root },
    );
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.on('exit', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error('keys create failed'))));
  });
  const child = spawn(process.execPath, ['--import', LOADER, CLI, 'serve', '--config', configFile], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = `${await servingUrl(child)}/mcp`;
  return {
    child,
    target: {
      name,
      pid: child.pid,
      url,
      headers: { Authorization: `Bearer ${key}` },
      stdioArgs: ['--import', LOADER, CLI, 'stdio', '--config', configFile],
    },
  };
}

async function bare(): Promise<{ child: ChildProcess; target: Target }> {
  const child = spawn(process.execPath, ['--import', serverLoader(ROOT), BARE, 'http'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve) => child.stdout!.once('data', (d) => resolve(String(d).trim())));
  return {
    child,
    target: {
      name: 'bare',
      pid: child.pid,
      url,
      headers: {},
      stdioArgs: ['--import', serverLoader(ROOT), BARE, 'stdio'],
    },
  };
}

async function httpClient(target: Target, era: Era): Promise<Caller> {
  if (era === 'legacy') {
    const c = new ClientV1({ name: 'bench', version: '1' });
    await c.connect(new HttpV1(new URL(target.url), { requestInit: { headers: target.headers } }));
    return c;
  }
  const c = new ClientV2({ name: 'bench', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await c.connect(new HttpV2(new URL(target.url), { requestInit: { headers: target.headers } }));
  return c;
}

/** The stdio server's process, known once its client has started it. */
let stdioPid: number | undefined;

async function stdioClient(target: Target, era: Era, configEnv: NodeJS.ProcessEnv): Promise<Caller> {
  const params = {
    command: process.execPath,
    args: target.stdioArgs,
    cwd: target.name === 'baseline' ? BASELINE : ROOT,
    stderr: 'ignore' as const,
    env: configEnv as Record<string, string>,
  };
  if (era === 'legacy') {
    const c = new ClientV1({ name: 'bench', version: '1' });
    const transport = new StdioV1(params);
    await c.connect(transport);
    stdioPid = transport.pid ?? undefined;
    return c;
  }
  const c = new ClientV2({ name: 'bench', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  const transport = new StdioV2(params);
  await c.connect(transport);
  stdioPid = transport.pid ?? undefined;
  return c;
}

async function drive(clients: Caller[], seconds: number): Promise<number> {
  const end = performance.now() + seconds * 1000;
  let calls = 0;
  await Promise.all(
    clients.map(async (c) => {
      while (performance.now() < end) {
        const r = (await c.callTool({ name: 'echo', arguments: { text: 'ping' } })) as {
          isError?: boolean;
          content: unknown;
        };
        if (r.isError) throw new Error(JSON.stringify(r.content));
        calls++;
      }
    }),
  );
  return calls / seconds;
}

interface Figure {
  readonly perSecond: number;
  /** The server's CPU milliseconds per call, when its process is known. */
  readonly cpuMs?: number;
}

async function measure(
  open: () => Promise<Caller[]>,
  pidOf?: number | (() => number | undefined),
  warmSeconds = FIGURE_WARM_SECONDS,
): Promise<Figure> {
  const clients = await open();
  const pid = typeof pidOf === 'function' ? pidOf() : pidOf;
  try {
    // Warm-up from the first answer: a stdio server answers initialize before its host has started (its
    // tool calls wait for it), so a fixed warm-up from the connect measured the host's start as calls.
    await Promise.all(clients.map((c) => c.callTool({ name: 'echo', arguments: { text: 'ping' } })));
    await drive(clients, warmSeconds);
    const before = pid ? cpuSeconds(pid) : 0;
    const perSecond = await drive(clients, SECONDS);
    const cpuMs = pid ? ((cpuSeconds(pid) - before) * 1000) / (perSecond * SECONDS) : undefined;
    return { perSecond, cpuMs };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}

console.log(
  `# machine: ${machine()}; servers and clients share the cores; ${SECONDS} s per figure after the first answer and ${FIGURE_WARM_SECONDS} s warm-up (a stdio server: ${Math.max(WARM_SECONDS, FIGURE_WARM_SECONDS)} s), each HTTP server first warmed ${WARM_SECONDS} s per era, median of ${ROUNDS}`,
);
const { configFile } = await benchEnvironment({ plugins: [ECHO_FAMILY], log: { level: 'info' } });
const servers = [await exocortex(configFile), await bare()];
if (BASELINE) {
  // Its own vault and database (its migrations may differ), and its own copy of the fixture family.
  const own = await benchEnvironment(
    { plugins: [path.join(BASELINE, 'test/fixtures/families/echo')], log: { level: 'info' } },
    { migrated: false },
  );
  servers.push(await exocortex(own.configFile, BASELINE, 'baseline'));
  console.log(`# baseline: ${BASELINE}`);
}
const cells: Array<{ label: string; run: (t: Target) => Promise<Figure> }> = [];
for (const era of ['legacy', 'modern'] as const) {
  for (const n of [1, 16])
    cells.push({
      label: `roundtrip_${era}_http_${n}_clients`,
      run: (t) => measure(() => Promise.all(Array.from({ length: n }, () => httpClient(t, era))), t.pid),
    });
}
try {
  if (WARM_SECONDS > 0)
    for (const s of servers)
      for (const era of ['legacy', 'modern'] as const)
        await measure(
          () => Promise.all(Array.from({ length: 4 }, () => httpClient(s.target, era))),
          undefined,
          WARM_SECONDS,
        );
  for (const cell of cells) {
    const figures: Partial<Record<Name, Figure[]>> = {};
    for (let r = 0; r < ROUNDS; r++)
      for (const s of r % 2 ? [...servers].reverse() : servers)
        (figures[s.target.name] ??= []).push(await cell.run(s.target));
    report(cell.label, figures);
  }
} finally {
  // Exocortex's stdio below opens the database itself once this owner has let go of it.
  await Promise.all(servers.map((s) => new Promise((resolve) => s.child.once('exit', resolve).kill('SIGTERM'))));
}
// stdio: the server is the client's child, started per figure (Exocortex's stdio opens the vault itself).
for (const era of ['legacy', 'modern'] as const) {
  const figures: Partial<Record<Name, Figure[]>> = {};
  const targets = servers.map((s) => s.target);
  for (let r = 0; r < ROUNDS; r++) {
    for (const t of r % 2 ? [...targets].reverse() : targets)
      (figures[t.name] ??= []).push(
        await measure(
          async () => [await stdioClient(t, era, process.env)],
          () => stdioPid,
          Math.max(WARM_SECONDS, FIGURE_WARM_SECONDS),
        ),
      );
  }
  report(`roundtrip_${era}_stdio_1_client`, figures);
}

function report(label: string, figures: Partial<Record<Name, Figure[]>>): void {
  const rate = (n: Name) => median((figures[n] ?? []).map((f) => f.perSecond));
  const cpu = (n: Name) => {
    const xs = (figures[n] ?? []).flatMap((f) => (f.cpuMs === undefined ? [] : [f.cpuMs]));
    return xs.length ? median(xs) : undefined;
  };
  const runs = (n: Name) => (figures[n] ?? []).map((f) => f.perSecond.toFixed(0)).join(' ');
  const ours = rate('exocortex');
  const bareRate = rate('bare');
  const parts = [
    `${label}: ${ours.toFixed(0)} calls/s, bare SDK ${bareRate.toFixed(0)} calls/s, ratio ${(ours / bareRate).toFixed(2)}`,
  ];
  if (figures.baseline) {
    const theirs = rate('baseline');
    parts.push(
      `baseline ${theirs.toFixed(0)} calls/s (ratio to bare ${(theirs / bareRate).toFixed(2)}), ÷ baseline ${(ours / theirs).toFixed(2)}`,
    );
  }
  const ourCpu = cpu('exocortex');
  if (ourCpu !== undefined) {
    const cpus = [`server CPU per call ${ourCpu.toFixed(2)} ms`, `bare ${cpu('bare')?.toFixed(2)} ms`];
    const theirCpu = cpu('baseline');
    if (theirCpu !== undefined)
      cpus.push(`baseline ${theirCpu.toFixed(2)} ms, ÷ baseline ${(ourCpu / theirCpu).toFixed(2)}`);
    parts.push(cpus.join(', '));
  }
  const names: Name[] = figures.baseline ? ['exocortex', 'baseline', 'bare'] : ['exocortex', 'bare'];
  console.log(`${parts.join('; ')} (runs: ${names.map(runs).join(' | ')})`);
}
