// The shared offset cursor: pages of one query walk a list to its end with no row twice, and a cursor is
// refused on another query, tool, user or vault; a text window never splits a surrogate pair.
import t from 'tap';
import { offsetPager, textWindow } from '../../../src/sdk/query/index.js';

const owner = { principal: { user: 'u1', vaultId: 1 } };
const rows = Array.from({ length: 23 }, (_, i) => `row${i}`);

t.test('walks a list to its end, limit may change between pages', async (t) => {
  const pages = offsetPager('get_links');
  const seen: string[] = [];
  let cursor: string | null | undefined;
  let limit = 5;
  do {
    const input = { path: 'A.md', limit, ...(cursor ? { cursor } : {}) };
    const start = pages.start(owner, input);
    const page = rows.slice(start, start + limit);
    seen.push(...page);
    cursor = pages.next(owner, input, start, page.length, rows.length);
    limit = limit === 5 ? 3 : 5;
  } while (cursor);
  t.same(seen, rows);
});

t.test('refuses a cursor of another query, tool, user or vault', async (t) => {
  const pages = offsetPager('get_links');
  const cursor = pages.next(owner, { path: 'A.md' }, 0, 5, 23)!;
  t.equal(pages.start(owner, { path: 'A.md', cursor, limit: 9 }), 5);
  t.throws(() => pages.start(owner, { path: 'B.md', cursor }), { code: 'invalid_arguments' });
  t.throws(() => offsetPager('get_backlinks').start(owner, { path: 'A.md', cursor }), { code: 'invalid_arguments' });
  t.throws(() => pages.start({ principal: { user: 'u2', vaultId: 1 } }, { path: 'A.md', cursor }));
  t.throws(() => pages.start({ principal: { user: 'u1', vaultId: 2 } }, { path: 'A.md', cursor }));
});

t.test('text windows cover the text once and keep surrogate pairs whole', async (t) => {
  const text = '😀a'.repeat(50);
  let offset: number | null = 0;
  let out = '';
  while (offset !== null) {
    const w = textWindow(text, offset, 4);
    t.notOk(/[\ud800-\udbff]$/.test(w.content), 'no lone high surrogate at a window end');
    out += w.content;
    offset = w.next_offset;
  }
  t.equal(out, text);
});
