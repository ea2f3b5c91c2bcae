// bench/startup: process start → MCP initialize answered, over stdio, for the compiled build
// (what npm start runs) and under tsx. Prints medians of several runs; the variants take turns in each
// round, so a slow spell of the machine falls on all of them.
// Env: RUNS (default 7) rounds; BENCH_BASELINE=<another checkout with its own build (npm run build) and
// native core> starts that checkout's compiled build too, in the same rounds, and prints the compiled
// build's time ÷ the baseline's (the median of the rounds' ratios). Then what most of the wait is: the MCP SDK's
// import in a fresh process, from its packages and from the build's bundle (src/host/mcp/sdk.ts), and the heap
// once zod is imported after it, as the settings do.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { benchEnvironment, machine, median, ROOT } from './lib/setup.js';

const RUNS = Number(process.env.RUNS ?? 7);
const BASELINE = process.env.BENCH_BASELINE ? path.resolve(process.env.BENCH_BASELINE) : undefined;

async function once(args: string[]): Promise<number> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'ignore'] });
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
  };
  child.stdin.write(JSON.stringify(init) + '\n');
  const ms = await new Promise<number>((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (d) => {
      buf += d;
      if (buf.includes('"id":1')) resolve(performance.now() - t0);
    });
    child.on('exit', (code) => reject(new Error(`server exited ${code} before answering`)));
  });
  child.kill('SIGTERM');
  await new Promise((r) => child.on('exit', r));
  return ms;
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
const times = new Map<string, number[]>(variants.map(([name]) => [name, []]));
for (let i = 0; i < RUNS; i++) for (const [name, args] of variants) times.get(name)!.push(await once(args));
for (const [name, ts] of times) {
  console.log(
    `${name}: ${median(ts).toFixed(0)} ms (median of ${RUNS}, min ${Math.min(...ts).toFixed(0)}, max ${Math.max(...ts).toFixed(0)})`,
  );
}
const ours = times.get('startup_initialize_compiled');
const theirs = times.get('startup_initialize_compiled_baseline');
if (ours && theirs) {
  const ratios = ours.map((t, i) => t / theirs[i]);
  console.log(
    `startup_initialize_compiled_vs_baseline: ${median(ratios).toFixed(2)} ratio (median of ${RUNS} rounds, min ${Math.min(...ratios).toFixed(2)}, max ${Math.max(...ratios).toFixed(2)}; under 1 is faster)`,
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
