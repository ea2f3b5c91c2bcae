// Large frontmatter: a block over the limit is kept raw with a too_large error and never parsed, a block
// under it parses in linear time (yaml's own duplicate-key check was quadratic), and duplicates are still errors.
// Linear is checked as a ratio of two sizes measured in the same run (never a wall-clock limit: the machine
// may be busy), so a quadratic parser (16× for 4× the keys) fails and a loaded machine does not.
import t from 'tap';
import { DEFAULT_MAX_FRONTMATTER_BYTES, frontmatterBlockBytes, parseNote } from '../../../src/markdown/index.js';

const keys = (n: number): string =>
  Array.from({ length: n }, (_, i) => `key_number_${i}: value number ${i}`).join('\n');
const big = `---\n${keys(40_000)}\n---\n# Body\ntext #tag\n`;

t.test('a 1.4 MB block of 40,000 keys is kept as raw text with too_large, never parsed', async (t) => {
  const m = parseNote(big, { path: 'big.md' });
  t.equal(m.frontmatter.present, true);
  t.equal(m.frontmatter.data, null);
  t.equal(m.frontmatter.error?.code, 'too_large');
  t.equal(m.frontmatter.text.length, big.indexOf('\n---\n# Body') + 1 - 4, 'the raw block is kept whole');
  t.same(
    m.outline.map((h) => h.text),
    ['Body'],
    'the body is parsed as usual',
  );
  t.same(
    m.tags.map((x) => x.tag),
    ['tag'],
  );
});

t.test('under a raised limit the same block parses in linear time', async (t) => {
  // Before: yaml compared every key with every earlier one; 20,000 keys took 9 s and 40,000 over a minute.
  const raised = { maxFrontmatterBytes: 4 * 1024 * 1024 };
  const small = `---\n${keys(10_000)}\n---\n# Body\n`;
  const best = (text: string) => {
    let ms = Infinity;
    for (let i = 0; i < 2; i++) {
      const t0 = performance.now();
      parseNote(text, { path: 'big.md', ...raised });
      ms = Math.min(ms, performance.now() - t0);
    }
    return ms;
  };
  const ratio = best(big) / best(small);
  t.ok(ratio < 12, `40,000 keys took ${ratio.toFixed(1)}× as long as 10,000 (linear: ~4, quadratic: ~16)`);
  const m = parseNote(big, { path: 'big.md', ...raised });
  t.equal(Object.keys(m.frontmatter.data ?? {}).length, 40_000);
  t.equal(m.frontmatter.error, undefined);
});

t.test('duplicate keys are still malformed_yaml, with their line; 1 and "1" are different keys', async (t) => {
  const m = parseNote('---\na: 1\nb:\n  c: 1\n  c: 2\n---\nbody\n', { path: 'd.md' });
  t.same(m.frontmatter.error, { code: 'malformed_yaml', message: 'Map keys must be unique', line: 5 });
  t.equal(parseNote('---\na: 1\na: 2\n---\n', { path: 'd.md' }).frontmatter.error?.code, 'malformed_yaml');
  t.equal(
    parseNote('---\n{a: 1, a: 2}\n---\n', { path: 'd.md' }).frontmatter.error?.code,
    'malformed_yaml',
    'flow mappings too',
  );
  t.equal(parseNote('---\n1: a\n"1": b\n---\n', { path: 'd.md' }).frontmatter.error, undefined);
});

t.test('frontmatterBlockBytes measures the block as the parser finds it, in UTF-8 bytes', async (t) => {
  t.equal(frontmatterBlockBytes(big), Buffer.byteLength(parseNote(big, { path: 'b.md' }).frontmatter.text));
  t.equal(frontmatterBlockBytes('---\r\nä: 1\r\n---\r\nbody'), Buffer.byteLength('ä: 1\r\n'));
  t.equal(frontmatterBlockBytes('\ufeff---\nx: 1\n---\n'), 5);
  t.equal(frontmatterBlockBytes('---\nnever closed\n'), 0);
  t.equal(frontmatterBlockBytes('no block'), 0);
  t.equal(frontmatterBlockBytes('---\n---\n'), 0);
  t.ok(DEFAULT_MAX_FRONTMATTER_BYTES >= 16 * 1024);
});
