// Parse time per KiB of src/markdown's parseNote on adversarial notes next to an ordinary one, at several
// sizes: a linear parser keeps each row flat as the size grows. Prints `name: value unit` lines.
// Usage: node --import tsx bench/parse-adversarial.ts   (BENCH_SIZES=16,64,256 KiB, BENCH_ROUNDS=5 runs, median)
// BENCH_MARKDOWN=<dir> times another copy of src/markdown (e.g. one checked out from an older commit).
import { cpus } from 'node:os';
import { pathToFileURL } from 'node:url';
import type { NoteModel, ParseNoteOptions } from '../src/markdown/index.js';

const dir = process.env.BENCH_MARKDOWN;
const { parseNote } = (await import(dir ? pathToFileURL(`${dir}/index.ts`).href : '../src/markdown/index.js')) as {
  parseNote: (input: string, options: ParseNoteOptions) => NoteModel;
};
const SIZES = (process.env.BENCH_SIZES ?? '16,64,256').split(',').map((k) => Number(k) * 1024);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** A run that takes longer than this skips the larger sizes of its input (the old quadratic code). */
const GIVE_UP_MS = Number(process.env.BENCH_GIVE_UP_MS ?? 20_000);

const fill = (unit: string, n: number): string => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
const keys = (n: number): string => {
  const lines: string[] = [];
  for (let i = 0, size = 0; size < n; i++) {
    const line = `key_number_${i}: value number ${i}`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join('\n');
};
const PROSE =
  '## Section\n\nSome ordinary prose with a [[Wiki Link]], a [markdown link](Other.md), an #inline/tag and `code`.\n' +
  '- [ ] a task 📅 2025-01-01 #todo\n- a list item with *emphasis* and a URL https://example.com/path\n\n' +
  '```js\nconst x = 1;\n```\n\n> a quote with $math$ and %%a comment%%\n\n';

const inputs: Record<string, (n: number) => string> = {
  normal_note: (n) => `---\ntitle: Normal\ntags: [a, b]\n---\n# Normal\n\n${fill(PROSE, n)}`,
  letters: (n) => fill('a', n),
  escaped_dollars: (n) => fill('$a \\', n),
  padded_heading: (n) => `# a${' '.repeat(n)}x`,
  slash_tag: (n) => `#a${'/'.repeat(n)}b`,
  backticks_u2028: (n) => `x\n\n${'`'.repeat(n)}\u2028`,
  emphasis_backticks: (n) => fill('*`', n),
  open_brackets: (n) => fill('[', n),
  many_wikilink_opens: (n) => fill('[[a', n),
  many_hashes: (n) => fill(' #a', n),
  backtick_lines: (n) => fill('`\n', n),
  frontmatter_keys: (n) => `---\n${keys(n)}\n---\nbody\n`,
};

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

console.log(`machine: ${cpus()[0]?.model ?? 'unknown'} x${cpus().length}, node ${process.version}`);
console.log(
  `data: generated notes at ${SIZES.map((s) => `${s / 1024} KiB`).join(', ')}; median of ${ROUNDS} runs${dir ? `; markdown from ${dir}` : ''}`,
);
parseNote(fill(PROSE, 64 * 1024), { path: 'warm.md' }); // JIT warm-up
for (const [name, make] of Object.entries(inputs)) {
  for (const size of SIZES) {
    const text = make(size);
    const kib = Buffer.byteLength(text) / 1024;
    const runs: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const t0 = performance.now();
      parseNote(text, { path: `${name}.md` });
      runs.push(performance.now() - t0);
      if (runs[r] > GIVE_UP_MS) break;
    }
    const ms = median(runs);
    console.log(`parse_${name}_${size / 1024}k: ${(ms / kib).toFixed(3)} ms/KiB`);
    if (ms > GIVE_UP_MS) {
      console.log(`parse_${name}_skipped_larger: over ${GIVE_UP_MS} ms at ${size / 1024} KiB`);
      break;
    }
  }
}
