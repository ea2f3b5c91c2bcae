// The expression parser and evaluator under hostile input: deep nesting, huge expressions, runaway work and
// strings, bad syntax — every one a typed refusal that ends in the MCP-REFUSAL line, none a throw or a hang.
import t from 'tap';
import { parseExpression } from '../../../plugins/bases/expr/parser.js';
import { isRefusal, parseRefusalLine, renderRefusal, type Refusal } from '../../../src/sdk/index.js';
import { LIMITS, vault, where } from './fixture.js';

const P = { maxChars: 4000, maxDepth: 64, maxNodes: 2000 };

function refusal(fn: () => unknown): Refusal {
  try {
    fn();
  } catch (e) {
    if (isRefusal(e)) return e;
    throw e;
  }
  throw new Error('no refusal');
}

t.test('the parser reads the language', async (t) => {
  t.same(parseExpression('a + b * c', P), {
    t: 'bin',
    op: '+',
    l: { t: 'id', name: 'a' },
    r: { t: 'bin', op: '*', l: { t: 'id', name: 'b' }, r: { t: 'id', name: 'c' } },
  });
  t.same(parseExpression('!file.inFolder("x")', P), {
    t: 'unary',
    op: '!',
    arg: {
      t: 'call',
      callee: { t: 'member', obj: { t: 'id', name: 'file' }, name: 'inFolder' },
      args: [{ t: 'lit', v: 'x' }],
    },
  });
  t.same(
    parseExpression('a - b - c', P),
    {
      t: 'bin',
      op: '-',
      l: { t: 'bin', op: '-', l: { t: 'id', name: 'a' }, r: { t: 'id', name: 'b' } },
      r: { t: 'id', name: 'c' },
    },
    'left-associative',
  );
  t.same(
    parseExpression("x / 2 == 'a\\'b'", P).t,
    'bin',
    'division is not a regex after an operand; escapes in strings',
  );
  t.same(parseExpression('/a\\/b[/]/gi', P), { t: 'regex', source: 'a\\/b[/]', flags: 'gi' });
  t.same(
    parseExpression('[1, 2,]', P),
    {
      t: 'list',
      items: [
        { t: 'lit', v: 1 },
        { t: 'lit', v: 2 },
      ],
    },
    'a trailing comma',
  );
  t.same(parseExpression('{"k": 1, j: true}.keys()', P).t, 'call');
  t.same(parseExpression('note["my prop"][0]', P).t, 'index');
});

t.test('bad syntax is bases_syntax with where it went wrong', async (t) => {
  for (const [src, problem] of [
    ['a +', /ends too early/],
    ['"open', /unclosed string/],
    ['a b', /operator expected/],
    ['(a', /"\)" expected/],
    ['a # b', /unexpected character/],
    ['', /empty expression/],
    ['1()', /only a function or method can be called/],
    ['/abc', /unclosed regular expression/],
  ] as const) {
    const r = refusal(() => parseExpression(src, P));
    t.equal(r.code, 'bases_syntax', src);
    t.match(r.message, problem, src);
    const line = parseRefusalLine(renderRefusal(r));
    t.equal(line?.code, 'bases_syntax', 'the MCP-REFUSAL contract line');
  }
});

t.test('deep nesting and huge expressions are refused before they cost anything', async (t) => {
  const deep = `${'('.repeat(100_000)}1${')'.repeat(100_000)}`;
  const big = refusal(() => parseExpression(deep, { ...P, maxChars: 1_000_000 }));
  t.equal(big.code, 'bases_too_complex', 'nesting past maxDepth');
  t.match(big.message, /nested deeper than 64/);
  t.match(big.message, /bases\.maxExpressionDepth/);
  t.equal(refusal(() => parseExpression(deep, P)).code, 'bases_too_complex', 'and past maxChars first');
  t.match(refusal(() => parseExpression(deep, P)).message, /bases\.maxExpressionChars/);
  t.equal(
    refusal(() => parseExpression('!'.repeat(10_000) + 'a', { ...P, maxChars: 1e6 })).code,
    'bases_too_complex',
    'unary chains',
  );
  t.equal(refusal(() => parseExpression('-'.repeat(3000) + '1', { ...P, maxChars: 1e6 })).code, 'bases_too_complex');
  const wide = Array.from({ length: 3000 }, (_, i) => `a${i}`).join(' + ');
  const w = refusal(() => parseExpression(wide, { ...P, maxChars: 1e6 }));
  t.equal(w.code, 'bases_too_complex', 'more parts than maxNodes');
  t.match(w.message, /bases\.maxExpressionNodes/);
  const chain = `a${'.b'.repeat(5000)}`;
  t.equal(
    refusal(() => parseExpression(chain, { ...P, maxChars: 1e6 })).code,
    'bases_too_complex',
    'long member chains',
  );
  const list = `[${'['.repeat(500)}${']'.repeat(500)}]`;
  t.equal(refusal(() => parseExpression(list, P)).code, 'bases_too_complex', 'nested lists');
});

t.test('evaluation is bounded in work and string size', async (t) => {
  const many = vault(Array.from({ length: 300 }, (_, i) => ({ path: `n${i}.md`, props: { n: i } })));
  await t.rejects(
    many.query(
      where('[1,2,3,4,5,6,7,8,9,10].map([1,2,3,4,5,6,7,8,9,10].map([1,2,3,4,5,6,7,8,9,10].map(value))).length > 0'),
      {
        limits: { maxWorkSteps: 100_000 },
      },
    ),
    { code: 'bases_too_costly', message: /bases\.maxWorkSteps/ },
    'rows × expression cost past the budget',
  );
  await t.rejects(
    many.query(where('"xxxxxxxxxx".repeat(1000000).length > 0'), { limits: { maxStringChars: 50_000 } }),
    { code: 'bases_too_costly', message: /bases\.maxStringChars/ },
    'a string past the cap is never built',
  );
  await t.rejects(
    many.query(where('"x".repeat(40).split("").reduce(acc + acc + "x", "").length > 1')),
    { code: 'bases_too_costly' },
    'doubling strings in a reduce',
  );
  const started = Date.now();
  let ticks = 0;
  const timer = setInterval(() => ticks++, 5);
  const r = await many.query(where('[1,2,3,4,5,6,7,8,9,10].map(value * n).reduce(acc + value, 0) > 100'), {
    limits: { maxWorkSteps: 10_000_000 },
  });
  clearInterval(timer);
  t.equal(r.total, 298, 'a legitimate heavy filter answers');
  t.ok(ticks > 0 || Date.now() - started < 20, 'timers ran while it evaluated (the event loop was not held)');
});

t.test('hostile bases: formula count, deep and/or/not trees, size', async (t) => {
  const v = vault([{ path: 'a.md' }]);
  const formulas = Array.from({ length: 300 }, (_, i) => `  f${i}: "1"`).join('\n');
  await t.rejects(v.query(`formulas:\n${formulas}\nviews: [{type: table, name: T}]`), { code: 'bases_too_complex' });
  let tree = 'x';
  for (let i = 0; i < 40; i++) tree = `{not: [${tree}]}`;
  await t.rejects(v.query(`filters: ${tree}\nviews: [{type: table, name: T}]`), {
    code: 'bases_invalid',
    message: /deeper than 32/,
  });
  const huge = `views: [{type: table, name: T}]\nformulas:\n  f: "${'1 + '.repeat(2000)}1"\n`;
  await t.rejects(v.query(huge, { limits: { ...LIMITS } }), {
    code: 'bases_too_complex',
    message: /bases\.maxExpressionChars/,
  });
});
