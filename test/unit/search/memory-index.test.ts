// The in-memory keyword index's pure parts: the tsvector text parser (weight A counted as title apart from the
// rest) and the postings it keeps across rewrites, removals and folds, with exact document frequencies.
import t from 'tap';
import { parseTsvector, VaultMemoryIndex } from '../../../plugins/search/keyword/memory-index.js';

t.test('a tsvector text becomes lexemes with title and body occurrence counts', async (t) => {
  const v = parseTsvector(`'cach':3,7A,9 'it''s':2 'redi':1A,4A 'x\\\\y':5 'zero'`);
  t.same(v.lexemes, ['cach', "it's", 'redi', 'x\\y', 'zero']);
  const unpack = (p: number) => [p >>> 16, p & 0xffff];
  t.same(v.packed.map(unpack), [
    [2, 1],
    [1, 0],
    [0, 2],
    [1, 0],
    [1, 0],
  ]);
  t.same(parseTsvector('').lexemes, []);
  // CJK bigrams carry B in the title and C in the body (search migration 0009).
  const cjk = parseTsvector(`'保持':1B,4C,6C '健康':2A,5`);
  t.same(cjk.packed.map(unpack), [
    [2, 1],
    [1, 1],
  ]);
});

t.test('postings follow rewrites and removals, before and after a fold', async (t) => {
  const ix = new VaultMemoryIndex(1);
  const row = (id: number, tsv: string, len: number, keys: string[] = []) => ({
    note_id: id,
    rev: 1,
    body_len: len,
    title_keys: keys,
    tsv,
  });
  ix.apply(row(1, `'redi':1A 'cach':2,3`, 3, ['redis']));
  ix.apply(row(2, `'cach':1 '保持':2 '持健':3`, 3));
  ix.fold();
  ix.apply(row(1, `'redi':1A 'queue':2`, 2, ['redis']));
  ix.apply(row(3, `'保护':1`, 1));
  for (const step of ['overlay', 'folded']) {
    const s = ix.scan(['cach', 'redi', '保']);
    const byNote = new Map(
      [...s.notes].map((n, c) => [n, [0, 1, 2].map((i) => [s.body[c * 3 + i], s.title[c * 3 + i]])]),
    );
    t.same(s.df, [1, 1, 2], `${step}: exact document frequencies (a lone CJK character is a prefix)`);
    t.same(
      byNote.get(1),
      [
        [0, 0],
        [0, 1],
        [0, 0],
      ],
      `${step}: the rewritten note has only its new terms`,
    );
    t.same(
      byNote.get(2),
      [
        [1, 0],
        [0, 0],
        [1, 0],
      ],
      step,
    );
    t.same(
      byNote.get(3),
      [
        [0, 0],
        [0, 0],
        [1, 0],
      ],
      step,
    );
    t.equal(s.docs, 3);
    t.equal(s.avgLength, 2);
    t.same(ix.exactTitle('redis'), [1]);
    ix.fold();
  }
  ix.remove(2);
  const s = ix.scan(['cach']);
  t.same(s.df, [0], 'a removed note holds nothing');
  t.equal(s.docs, 2);
});
