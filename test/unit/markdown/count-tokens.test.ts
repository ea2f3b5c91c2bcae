// cl100k token counts: exact for short text, sampled and scaled for long text.
import t from 'tap';
import { countTokens, countTokensBound, EXACT_TOKEN_CHARS } from '../../../src/markdown/index.js';

t.test('short text is counted exactly in cl100k', async (t) => {
  t.equal(await countTokens(''), 0);
  t.equal(await countTokens('hello world'), 2, '"hello" and " world" are one token each in cl100k');
  t.equal(await countTokens('tiktoken is great!'), 6);
});

t.test('long text is sampled within a few percent of the exact count', async (t) => {
  const { Tiktoken } = await import('js-tiktoken/lite');
  const ranks = (await import('js-tiktoken/ranks/cl100k_base')).default;
  const enc = new Tiktoken(ranks);
  const para = 'The gardener waters the tomatoes twice a week and writes down the yield in a daily note. ';
  const cjk = '知识管理是一种长期的习惯。';
  for (const text of [para.repeat(400), `${para.repeat(100)}${cjk.repeat(600)}${para.repeat(100)}`]) {
    t.ok(text.length > EXACT_TOKEN_CHARS);
    const exact = enc.encode(text).length;
    const sampled = await countTokens(text);
    t.ok(Math.abs(sampled - exact) / exact < 0.1, `sampled ${sampled} vs exact ${exact}`);
  }
});

t.test('a long CJK run is counted in pieces close to a whole-text encode', async (t) => {
  const { Tiktoken } = await import('js-tiktoken/lite');
  const ranks = (await import('js-tiktoken/ranks/cl100k_base')).default;
  const enc = new Tiktoken(ranks);
  const run = '我的晨间写作是一种长期的习惯'.repeat(6);
  const exact = enc.encode(run).length;
  const counted = await countTokens(run);
  t.ok(Math.abs(counted - exact) / exact < 0.1, `pieces ${counted} vs whole ${exact}`);
});

t.test('text that spells a special token is counted as text, never refused', async (t) => {
  // js-tiktoken throws on `<|endoftext|>` by default; a note about language models may well contain it.
  const short = await countTokens('the model stops at <|endoftext|> here');
  t.ok(short > 8, `counted ${short}`);
  const long = await countTokens(
    `${'A note about tokenizers and their special markers. '.repeat(40)}<|endoftext|><|fim_prefix|>`,
  );
  t.ok(long > 300, `counted ${long}`);
});

t.test('a second count of the same text (memoized pre-tokens) gives the same number', async (t) => {
  const text = 'Gardening log: tomatoes, basil and 42 peppers; 知识管理是一种长期的习惯。'.repeat(5);
  t.equal(await countTokens(text), await countTokens(text));
});

t.test('countTokensBound is linear in one long pre-token, and stays at or just above the encoder', async (t) => {
  // Before: one all-ASCII pre-token went whole to the BPE merge, quadratic in its length (2,500 / 5,000 /
  // 10,000 letters took 0.58 / 2.3 / 10 s; 40,000 would take minutes). Fresh random letters, so the memo
  // cannot help. Bounds are generous for a loaded two-core machine: ~10 µs per character measured.
  const { Tiktoken } = await import('js-tiktoken/lite');
  const ranks = (await import('js-tiktoken/ranks/cl100k_base')).default;
  const enc = new Tiktoken(ranks);
  let seed = 35;
  const letters = (n: number) =>
    Array.from({ length: n }, () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return String.fromCharCode(97 + (seed % 26));
    }).join('');
  await countTokensBound('warm up');
  for (const text of [letters(40_000), `(${'['.repeat(40_000)}`, `x${'{]'.repeat(20_000)}`]) {
    const t0 = performance.now();
    const n = await countTokensBound(text);
    const ms = performance.now() - t0;
    t.ok(
      ms < 15_000,
      `${text.length} characters of ${JSON.stringify(text.slice(0, 3))}… counted in ${ms.toFixed(0)} ms`,
    );
    t.ok(n > 0 && n <= Buffer.byteLength(text), `${n} tokens: never more than one per byte`);
  }
  const word = letters(1_500);
  const exact = enc.encode(word).length;
  const bound = await countTokensBound(word);
  t.ok(bound >= exact && bound <= exact * 1.03, `a 1,500-letter word: ${bound} counted, ${exact} whole`);
  const prose = 'The gardener waters the tomatoes twice a week, notes antidisestablishmentarianism, and sleeps. ';
  t.equal(await countTokensBound(prose.repeat(20)), enc.encode(prose.repeat(20)).length, 'prose counts exactly');
});
