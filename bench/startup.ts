// bench/startup: process start → MCP initialize answered, over stdio, for the compiled build
// (what npm start runs) and under tsx; and, for the compiled build, start → the first tools/list answered
// (it waits for the host: the database opened, the families booted). Prints medians of several runs; the
// variants take turns in each round, so a slow spell of the machine falls on all of them.
// Env: RUNS (default 7) rounds; BENCH_BASELINE=<another checkout with its own build (npm run build) and
// native core> starts that checkout's compiled build too, in the same rounds, and prints the compiled
// build's time ÷ the baseline's (the median of the rounds' ratios). Then what most of the wait is: the MCP SDK's
// import in a fresh process, from its packages and from the build's bundle (src/host/mcp/sdk.ts), and the heap
// once zod is imported after it, as the settings do.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchEnvironment, machine, median, ROOT, stealMeter } from './lib/setup.js';

const RUNS = Number(process.env.RUNS ?? 7);
const BASELINE = process.env.BENCH_BASELINE ? path.resolve(process.env.BENCH_BASELINE) : undefined;

/** ms from spawn to initialize answered, and with `list`, to the tools/list sent after it answered. */
async function once(args: string[], list = false): Promise<{ initialize: number; toolsList?: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'ignore'] });
  const send = (message: object) => child.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\n');
  send({
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
  });
  const got = await new Promise<{ initialize: number; toolsList?: number }>((resolve, reject) => {
    let buf = '';
    let initialize: number | undefined;
    child.stdout.on('data', (d) => {
      buf += d;
      if (initialize === undefined && buf.includes('"id":1')) {
        initialize = performance.now() - t0;
        if (!list) return resolve({ initialize });
        send({ method: 'notifications/initialized' });
        send({ id: 2, method: 'tools/list' });
      }
      if (initialize !== undefined && list && buf.includes('"id":2'))
        resolve({ initialize, toolsList: performance.now() - t0 });
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code} before answering`)));
  });
  child.kill('SIGTERM');
  await new Promise((r) => child.on('exit', r));
  return got;
}

const { configFile } = await benchEnvironment({ plugins: [] });
console.log(`# machine: ${machine()}; embedded PGlite (reopened data dir), built-in families`);
const compiled = path.join(ROOT, 'dist/src/cli/main.js');
const variants: Array<[string, string[]]> = [];
if (existsSync(compiled)) {
  variants.push(['startup_initialize_compiled', [compiled, 'stdio', '--config', configFile]]);
  // What `exocortex stdio` runs: the bin, which finds the compiled build.
  variants.push(['startup_initialize_bin', [path.join(ROOT, 'bin/exocortex.js'), 'stdio', '--config', configFile]]);
}
variants.push([
  'startup_initialize_tsx',
  ['--import', 'tsx', path.join(ROOT, 'src/cli/main.ts'), 'stdio', '--config', configFile],
]);
variants.push([
  'baseline_node_noop',
  ['-e', 'process.stdin.once("data", () => process.stdout.write(JSON.stringify({id:1})+"\\n"))'],
]);
if (BASELINE) {
  const built = path.join(BASELINE, 'dist/src/cli/main.js');
  if (!existsSync(built)) throw new Error(`BENCH_BASELINE: ${built} does not exist (npm run build there first)`);
  console.log(`# baseline: ${BASELINE}`);
  variants.push(['startup_initialize_compiled_baseline', [built, 'stdio', '--config', configFile]]);
}
// One unmeasured start of each: the first writes the config's relay card, and the disk cache warms.
for (const [, args] of variants) await once(args);
const steal = stealMeter();
const times = new Map<string, number[]>(variants.map(([name]) => [name, []]));
// The compiled builds also answer a tools/list: the start a client waits for before its first call.
const listed = (name: string) => name.startsWith('startup_initialize_compiled');
const listName = (name: string) => name.replace('startup_initialize_', 'startup_tools_list_');
for (const [name] of variants) if (listed(name)) times.set(listName(name), []);
for (let i = 0; i < RUNS; i++)
  for (const [name, args] of variants) {
    const got = await once(args, listed(name));
    times.get(name)!.push(got.initialize);
    if (got.toolsList !== undefined) times.get(listName(name))!.push(got.toolsList);
  }
for (const [name, ts] of times) {
  console.log(
    `${name}: ${median(ts).toFixed(0)} ms (median of ${RUNS}, min ${Math.min(...ts).toFixed(0)}, max ${Math.max(...ts).toFixed(0)})`,
  );
}
console.log(
  `startup_steal: ${(steal() * 100).toFixed(1)} % (of the machine's CPU time its hypervisor took for others over the rounds, /proc/stat)`,
);
for (const figure of ['startup_initialize_compiled', 'startup_tools_list_compiled']) {
  const ours = times.get(figure);
  const theirs = times.get(`${figure}_baseline`);
  if (!ours || !theirs) continue;
  const ratios = ours.map((t, i) => t / theirs[i]);
  console.log(
    `${figure}_vs_baseline: ${median(ratios).toFixed(2)} ratio (median of ${RUNS} rounds, min ${Math.min(...ratios).toFixed(2)}, max ${Math.max(...ratios).toFixed(2)}; under 1 is faster)`,
  );
}

/**
 * In a fresh process: ms to import `specs` in turn (what a stdio start imports before it answers), then zod (the
 * settings' own, loaded after the answer) and the heap in MiB after a full collection.
 */
async function importProbe(specs: readonly string[]): Promise<{ ms: number; heapMiB: number }> {
  const script = `const t = performance.now();
for (const s of ${JSON.stringify(specs)}) await import(s);
const ms = performance.now() - t;
await import('zod');
globalThis.gc();
process.stdout.write(JSON.stringify({ ms, heapMiB: process.memoryUsage().heapUsed / 1048576 }));`;
  const child = spawn(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  await new Promise((r) => child.on('exit', r));
  return JSON.parse(out);
}

const bundle = path.join(ROOT, 'dist/src/host/mcp/sdk.js');
if (existsSync(bundle)) {
  const probes: Array<[string, string[]]> = [
    ['startup_sdk_import_packages', ['@modelcontextprotocol/server', '@modelcontextprotocol/server/stdio']],
    ['startup_sdk_import_bundle', [pathToFileURL(bundle).href]],
  ];
  const got = new Map<string, Array<{ ms: number; heapMiB: number }>>(probes.map(([name]) => [name, []]));
  for (let i = 0; i < RUNS; i++) for (const [name, specs] of probes) got.get(name)!.push(await importProbe(specs));
  for (const [name, rs] of got) {
    const ms = rs.map((r) => r.ms);
    console.log(
      `${name}: ${median(ms).toFixed(0)} ms (median of ${RUNS}, min ${Math.min(...ms).toFixed(0)}, max ${Math.max(...ms).toFixed(0)}; the import alone, in a fresh process)`,
    );
    console.log(
      `${name}_heap: ${median(rs.map((r) => r.heapMiB)).toFixed(1)} MiB (heap used once zod is imported too, collected)`,
    );
  }
}
