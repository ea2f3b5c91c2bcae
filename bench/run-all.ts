// npm run bench: runs the bench scripts in bench/ one after another, each in its own process, and passes its
// `name: value unit` lines through. Never runs two at once (their figures would disturb each other).
// Usage: npm run bench [-- [--list] [filter…]]   a filter keeps the benches whose name contains it (e.g. notes search)
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { benchCorpora } from '../test/fixtures/corpus.js';
import { benchNames, usageOf } from './lib/usage.js';

const here = import.meta.dirname;
const args = process.argv.slice(2);
const list = args.includes('--list');
const filters = args.filter((a) => a !== '--list');

const benches = benchNames().filter((name) => filters.length === 0 || filters.some((f) => name.includes(f)));

if (benches.length === 0) {
  console.error(`bench: no bench matches ${filters.join(', ')}; benches: ${benchNames().join(', ')}`);
  process.exit(2);
}
if (list) {
  for (const name of benches) console.log(`${name}: ${usageOf(name)}`);
  process.exit(0);
}

const corpora = benchCorpora();
console.log(
  `# machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
);
console.log(
  `# data: ${corpora.full ? 'full public corpus' : 'vendored trimmed corpus (the full one is not beside the checkout)'} at ${path.relative(process.cwd(), corpora.root) || '.'}`,
);
const failed: string[] = [];
for (const name of benches) {
  console.log(`# bench/${name}.ts`);
  const started = Date.now();
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(here, `${name}.ts`)], { stdio: 'inherit' });
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  if (r.status === 0) console.log(`# bench/${name}.ts done in ${seconds} s`);
  else {
    failed.push(name);
    console.log(`# bench/${name}.ts failed (${r.signal ?? `exit ${r.status}`}) after ${seconds} s`);
  }
}
if (failed.length) {
  console.error(`bench: ${failed.length} of ${benches.length} failed: ${failed.join(', ')}`);
  process.exit(1);
}
