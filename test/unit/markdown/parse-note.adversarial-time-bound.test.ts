// Fuzz: parseNote stays within a time bound per KiB on adversarial notes (long runs of one character class,
// nested brackets, many `[[`, `#`, backticks, dollars, long lines, big frontmatter). A super-linear scanner
// shows as a note far over the bound.
//
// `npm test` runs a few seconds' worth (FUZZ_RUNS=16 notes up to 24 KiB). A longer run:
//   FUZZ_RUNS=400 FUZZ_MAX_KIB=512 npx tap --timeout 3600 test/unit/markdown/parse-note.adversarial-time-bound.test.ts
// FUZZ_SEED replays a failing run (fast-check prints the seed and the shrunk counterexample).
import t from 'tap';
import fc from 'fast-check';
import { parseNote } from '../../../src/markdown/index.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 16);
const MAX_KIB = Number(process.env.FUZZ_MAX_KIB ?? 24);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
/** Generous for a shared two-core machine: linear code needs 0.1–10 ms per KiB; the quadratic bugs needed 100+ at 64 KiB. */
const FLOOR_MS = 250;
const PER_KIB_MS = 30;

// Characters and short units that each drove some scanner or micromark construct to super-linear time.
const UNITS = [
  'a',
  '[',
  ']',
  '[[',
  ']]',
  '[[a',
  '[a](',
  '[a](b',
  '(',
  '#',
  '# ',
  ' #a',
  '#a/',
  '/',
  '`',
  '``',
  '`a',
  '`\n',
  '~',
  '~~~',
  '$',
  '$a',
  '$a \\',
  '\\$',
  '$$',
  '%',
  '%%',
  '*',
  '*`',
  '_',
  '_a ',
  '<',
  '<a',
  '<a ',
  '<!--',
  '&#',
  '!',
  '![',
  '^',
  ' ^a',
  '>',
  '> ',
  '- ',
  '- [ ] ',
  '1. ',
  '\t',
  ' ',
  '\n',
  '\r\n',
  '\u2028',
  'http://',
  'www.',
  'a:',
  ':',
  '|',
  '"',
  "'",
  '🔁',
  '⛔ a,',
];
const unit = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...UNITS) },
  { weight: 1, arbitrary: fc.array(fc.constantFrom(...UNITS), { minLength: 2, maxLength: 4 }).map((u) => u.join('')) },
);
const segment = fc
  .tuple(unit, fc.integer({ min: 1, max: MAX_KIB * 1024 }))
  .map(([u, n]) => u.repeat(Math.ceil(n / u.length)).slice(0, n));
const note = fc
  .tuple(fc.array(segment, { minLength: 1, maxLength: 3 }), fc.constantFrom('', '\n', '\n\n', ' '), fc.boolean())
  .map(([segments, sep, frontmatter]) => {
    const body = segments.join(sep).slice(0, MAX_KIB * 1024);
    // In the frontmatter, the adversarial text is a YAML value (the YAML parser gets its share too).
    return frontmatter ? `---\nk: ${body.slice(0, 16 * 1024).replace(/\n/g, ' ')}\n---\n${body}` : body;
  });

function timed(text: string): number {
  const t0 = performance.now();
  parseNote(text, { path: 'fuzz.md' });
  return performance.now() - t0;
}

t.test(
  `parseNote stays under ${FLOOR_MS} ms + ${PER_KIB_MS} ms/KiB on adversarial notes (${RUNS} runs, up to ${MAX_KIB} KiB)`,
  async (t) => {
    parseNote('# warm-up\n`a` [[b]] #c $d$', { path: 'warm.md' });
    let worst = 0;
    fc.assert(
      fc.property(note, (text) => {
        const kib = text.length / 1024;
        const bound = FLOOR_MS + PER_KIB_MS * kib;
        // A pause of the machine (GC, another process) is not the parser: over the bound, measure once more.
        let ms = timed(text);
        if (ms > bound) ms = Math.min(ms, timed(text));
        worst = Math.max(worst, ms / Math.max(kib, 1));
        return ms <= bound;
      }),
      { numRuns: RUNS, ...(SEED !== undefined ? { seed: SEED } : {}) },
    );
    t.pass(`worst ${worst.toFixed(2)} ms per KiB`);
  },
);
