// bench/startup: process start → MCP initialize answered, over stdio, for the compiled build
// (what npm start runs) and under tsx. Prints medians of several runs.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { benchEnvironment, machine, median, ROOT } from './lib/setup.js';

const RUNS = Number(process.env.RUNS ?? 7);

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
for (const [name, args] of variants) {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) times.push(await once(args));
  console.log(
    `${name}: ${median(times).toFixed(0)} ms (median of ${RUNS}, min ${Math.min(...times).toFixed(0)}, max ${Math.max(...times).toFixed(0)})`,
  );
}
