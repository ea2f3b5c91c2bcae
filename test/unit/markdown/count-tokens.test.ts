// cl100k token counts: exact for short text, sampled and scaled for long text.
import t from 'tap';
import { countTokens, EXACT_TOKEN_CHARS } from '../../../src/markdown/index.js';

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
