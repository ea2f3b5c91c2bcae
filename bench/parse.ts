// Parse throughput of src/markdown's parseNote on the main thread over the public corpus vaults.
// Reads the corpus read-only with node:fs; prints `name: value unit` lines. Usage: tsx bench/parse.ts [root]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, relative } from 'node:path';
import { parseNote } from '../src/markdown/index.js';
import { benchCorpora } from '../test/fixtures/corpus.js';

const root = process.argv[2] ?? benchCorpora().root;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

function notesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...notesUnder(p));
    else if (entry.isFile() && entry.name.endsWith('.md')) out.push(p);
  }
  return out;
}

console.log(`machine: ${cpus()[0]?.model ?? 'unknown'} x${cpus().length}, node ${process.version}`);
console.log(`data: ${root}`);
let allBytes = 0;
let allNotes = 0;
let allMs = 0;
let fallbacks = 0;
for (const vault of readdirSync(root).filter((d) => statSync(join(root, d)).isDirectory() && d !== 'LICENSES')) {
  const files = notesUnder(join(root, vault)).map((p) => ({
    path: relative(join(root, vault), p),
    bytes: readFileSync(p),
  }));
  const bytes = files.reduce((n, f) => n + f.bytes.length, 0);
  for (const f of files) parseNote(f.bytes, { path: f.path }); // warm-up
  let best = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    for (const f of files) {
      const m = parseNote(f.bytes, { path: f.path });
      if (r === 0 && m.problems.some((p) => p.includes('line scanner'))) fallbacks++;
    }
    best = Math.min(best, performance.now() - t0);
  }
  console.log(`parse_${vault}_mb_per_s: ${(bytes / 1e6 / (best / 1000)).toFixed(2)} MB/s`);
  console.log(`parse_${vault}_notes_per_s: ${(files.length / (best / 1000)).toFixed(0)} notes/s`);
  allBytes += bytes;
  allNotes += files.length;
  allMs += best;
}
console.log(`parse_all_mb_per_s: ${(allBytes / 1e6 / (allMs / 1000)).toFixed(2)} MB/s`);
console.log(`parse_all_notes_per_s: ${(allNotes / (allMs / 1000)).toFixed(0)} notes/s`);
console.log(`parse_all_notes: ${allNotes} notes`);
console.log(`parse_line_scanner_fallbacks: ${fallbacks} notes`);
