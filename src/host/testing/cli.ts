// How a test starts the exocortex command line as a process of its own: the compiled CLI (dist/, what
// bin/exocortex.js runs) when a build newer than every source exists — CI's `npm ci` builds it just
// before the tests — else the TypeScript sources through the checkout's loader (scripts/ts-loader, the one
// the tests themselves run under: it reads the sources' prebuilt mirror), or tsx where that is absent (an
// installed package). A compiled start costs about 60% of the CPU of one through tsx (its loader resolves and
// transforms every module on a thread of its own), and the suite starts the CLI some hundred times.
// EXOCORTEX_TEST_CLI=tsx forces the sources.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const COMPILED = path.join(ROOT, 'dist/src/cli/main.js');
const SOURCES = path.join(ROOT, 'src/cli/main.ts');
const LOADER = path.join(ROOT, 'scripts/ts-loader/register.mjs');
/** What `npm run build` compiles or copies into dist/. */
const INPUTS = ['src', 'plugins', 'migrations', 'schemas', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];

function newestMtime(p: string): number {
  const st = statSync(p, { throwIfNoEntry: false });
  if (!st) return 0;
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const entry of readdirSync(p)) newest = Math.max(newest, newestMtime(path.join(p, entry)));
  return newest;
}

let chosen: readonly string[] | undefined;

/**
 * The flags this process gives V8's WebAssembly compilers, which a child it starts runs with too: the suite
 * runs PGlite's WebAssembly on the baseline compiler alone (package.json's tap node-arg `--liftoff-only`),
 * since optimizing it costs ~2.5 CPU-s a start and a test process lives seconds; V8 flags cannot travel in
 * NODE_OPTIONS.
 */
function wasmFlags(): readonly string[] {
  return process.execArgv.filter((a) => /^--(no-)?(liftoff|wasm-)/.test(a));
}

/** Node arguments that let a child process run TypeScript (append the .ts file and its arguments). */
export function typescriptArgs(): readonly string[] {
  return [...wasmFlags(), ...(existsSync(LOADER) ? ['--import', pathToFileURL(LOADER).href] : ['--import', 'tsx'])];
}

/**
 * Node arguments that run the CLI (append the command and its arguments). `typescriptFamilies`: the
 * config names a family written in TypeScript (a test fixture), which only a CLI run through tsx can load.
 */
export function cliArgs(options: { typescriptFamilies?: boolean } = {}): readonly string[] {
  if (options.typescriptFamilies) return [...typescriptArgs(), SOURCES];
  if (chosen) return chosen;
  const compiledAt = process.env.EXOCORTEX_TEST_CLI === 'tsx' || !existsSync(COMPILED) ? 0 : statSync(COMPILED).mtimeMs;
  const fresh = compiledAt > 0 && INPUTS.every((p) => newestMtime(path.join(ROOT, p)) <= compiledAt);
  chosen = fresh ? [...wasmFlags(), COMPILED] : [...typescriptArgs(), SOURCES];
  return chosen;
}

/** Whether cliArgs() runs the compiled build (said in a test's output, so a figure can be read right). */
export function cliIsCompiled(): boolean {
  return cliArgs().includes(COMPILED);
}
