// ModelMemo: a contributor's derived value is computed once per model object and params, and never served for
// other params (a limit changed between prepare and write).
import t from 'tap';
import { ModelMemo } from '../../../src/sdk/index.js';

t.test('model-memo.once: the value derived by warm is the one get returns, without deriving again', async (t) => {
  let calls = 0;
  const memo = new ModelMemo((m: { text: string }, p: { max: number }) => {
    calls++;
    return m.text.slice(0, p.max);
  });
  const model = { text: 'abcdef' };
  memo.warm(model, { max: 3 });
  t.equal(memo.get(model, { max: 3 }), 'abc');
  t.equal(calls, 1, 'derived once');
  t.equal(memo.get({ text: 'abcdef' }, { max: 3 }), 'abc', 'another model object is derived on its own');
  t.equal(calls, 2);
});

t.test('model-memo.params: a value kept under other params is derived again', async (t) => {
  const memo = new ModelMemo(
    (m: { text: string }, p: { max: number }) => m.text.slice(0, p.max),
    (p) => String(p.max),
  );
  const model = { text: 'abcdef' };
  memo.warm(model, { max: 2 });
  t.equal(memo.get(model, { max: 4 }), 'abcd', 'not the stale value');
  t.equal(memo.get(model, { max: 4 }), 'abcd');
});
