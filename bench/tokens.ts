// bench/tokens: read results' cl100k token counts (countTokens: pieces, samples past 1,000 characters)
// against a whole-text js-tiktoken encode, over every public corpus note longer than 1,000 characters:
// error p50/p90/max and cost per note (first visit, and a second visit with the pre-token memo warm). Prints `name: value unit` lines. Usage: tsx bench/tokens.ts
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import { countTokens, EXACT_TOKEN_CHARS } from '../src/markdown/index.js';
import { benchCorpus, notesOnDisk } from '../test/fixtures/corpus.js';
import { machine, median, percentile } from './lib/setup.js';

const VAULTS = [
  'oldwinter-knowledge-garden',
  'obsidian-tasks-docs',
  'obsidian-tasks-demo',
  'obsidian-tasks-contributing',
];
const enc = new Tiktoken(cl100k);
await countTokens('warm up');
const errors: number[] = [];
const ours: number[] = [];
const whole: number[] = [];
const texts: string[] = [];
for (const vault of VAULTS) {
  const root = benchCorpus(vault);
  for (const rel of notesOnDisk(root)) {
    const text = readFileSync(path.join(root, rel), 'utf8');
    if (text.length <= EXACT_TOKEN_CHARS) continue;
    texts.push(text);
    let t0 = performance.now();
    const counted = await countTokens(text);
    ours.push(performance.now() - t0);
    t0 = performance.now();
    const exact = enc.encode(text).length;
    whole.push(performance.now() - t0);
    errors.push(Math.abs(counted - exact) / exact);
  }
}
// Second visit: every pre-token's count is memoized, as for a note an agent reads again (or a vault whose
// words the server has already seen); only the regex split and the sampling are left.
const again: number[] = [];
for (const text of texts) {
  const t0 = performance.now();
  await countTokens(text);
  again.push(performance.now() - t0);
}
console.log(`# machine: ${machine()}; ${VAULTS.join(', ')}: notes over ${EXACT_TOKEN_CHARS} characters`);
console.log(`tokens_notes: ${errors.length} notes`);
console.log(`tokens_error_p50: ${(percentile(errors, 50) * 100).toFixed(1)} %`);
console.log(`tokens_error_p90: ${(percentile(errors, 90) * 100).toFixed(1)} %`);
console.log(`tokens_error_max: ${(Math.max(...errors) * 100).toFixed(1)} %`);
console.log(`tokens_count_p50: ${median(ours).toFixed(2)} ms/note`);
console.log(`tokens_count_p90: ${percentile(ours, 90).toFixed(2)} ms/note`);
console.log(`tokens_count_seen_p50: ${median(again).toFixed(2)} ms/note (second visit: pre-token counts memoized)`);
console.log(`tokens_whole_encode_p50: ${median(whole).toFixed(2)} ms/note (baseline: js-tiktoken on the whole text)`);
console.log(`tokens_whole_encode_p90: ${percentile(whole, 90).toFixed(2)} ms/note`);
