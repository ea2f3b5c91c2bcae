// fitToBudget: a result within the budget by its bytes passes without counting; one over it shrinks the
// tool's sizing argument until an exact count fits, and says how to continue; one that cannot shrink fails.
import t from 'tap';
import { budgetSentence, fitToBudget, utf8Bytes, type ResultPaging } from '../../../src/sdk/result-budget.js';

interface Out {
  items: string[];
  next?: number;
}
const ITEMS = Array.from({ length: 1000 }, (_, i) => `item ${i} 漢字`);
const run = async (input: Record<string, unknown>): Promise<Out> => {
  const from = Number(input.offset ?? 0);
  const limit = Number(input.limit ?? 1000);
  const items = ITEMS.slice(from, from + limit);
  return { items, ...(from + items.length < ITEMS.length ? { next: from + items.length } : {}) };
};
const paging: ResultPaging<Record<string, unknown>, Out> = {
  limit: 'limit',
  size: (o) => o.items.length,
  next: (i, o) => (o.next === undefined ? undefined : { ...i, offset: o.next }),
};
// A stand-in tokenizer: one token per character (an over-count, like the host's bound).
const count = async (texts: readonly string[]) => texts.reduce((n, s) => n + s.length, 0);
const measure = (o: Out, _i: Record<string, unknown>, cut: unknown) => ({
  texts: [o.items.join('\n'), cut ? budgetSentence(cut as never, 'limit') : ''],
});

t.test('a small result passes on its bytes alone, uncounted', async (t) => {
  let counted = 0;
  const r = await fitToBudget({
    budget: 1000,
    paging,
    input: { limit: 5 },
    output: await run({ limit: 5 }),
    run,
    measure,
    count: async (x) => (counted++, count(x)),
    tool: 'x',
    setting: 's',
  });
  t.ok(r.fits);
  t.equal(counted, 0);
  t.ok(utf8Bytes(['漢']) === 3, 'bytes are UTF-8 bytes (every cl100k token is at least one)');
});

t.test('an oversized page shrinks until it fits and names the call that continues', async (t) => {
  const r = await fitToBudget({
    budget: 2000,
    paging,
    input: {},
    output: await run({}),
    run,
    measure,
    count,
    tool: 'list_x',
    setting: 'tools.maxResultTokens',
  });
  t.ok(r.fits);
  if (!r.fits) return;
  t.ok(r.tokens <= 2000, `${r.tokens} tokens`);
  t.ok(r.cut && r.cut.limit < 1000, `limit lowered to ${r.cut?.limit}`);
  t.same(r.cut?.continueWith, { tool: 'list_x', arguments: { limit: r.cut!.limit, offset: r.cut!.limit } });
  t.match(
    budgetSentence(r.cut!, 'limit'),
    /^Cut to fit the result budget of 2000 tokens \(tools\.maxResultTokens\): limit lowered to \d+\. Continue with list_x\(/,
  );
});

t.test('a tool that does not page, or cannot shrink, does not fit', async (t) => {
  const big = await run({});
  const none = await fitToBudget({
    budget: 1000,
    input: {},
    output: big,
    run,
    measure,
    count,
    tool: 'x',
    setting: 's',
  });
  t.equal(none.fits, false, 'no paging: refused by the caller');
  t.ok(none.tokens > 1000, `reports about ${none.tokens} tokens`);
  const one: Out = { items: ['x'.repeat(5000)] };
  const r = await fitToBudget({
    budget: 1000,
    paging,
    input: {},
    output: one,
    run: async () => one,
    measure,
    count,
    tool: 'x',
    setting: 's',
  });
  t.equal(r.fits, false);
});
