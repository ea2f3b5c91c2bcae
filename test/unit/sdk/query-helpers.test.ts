// The SDK's shared query helpers: one meaning of a folder argument, the limit clamp, the bound cursor
// codec and tag keys, as every family's tools use them.
import t from 'tap';
import { clampLimit, cursorCodec, folderScope, inFolder, tagKey, tagKeys } from '../../../src/sdk/query/index.js';
import { isRefusal } from '../../../src/sdk/refusals.js';

const code = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (e) {
    return isRefusal(e) ? e.code : 'thrown';
  }
  return undefined;
};

t.test('folderScope: one meaning of ., "", /x/, x\\, x/', async (t) => {
  for (const f of [undefined, null, '', '.', './', '/', '//', ' ', '\\'])
    t.same(folderScope(f), { folder: '', prefix: '' }, `${JSON.stringify(f)} is the whole vault`);
  for (const f of ['x', '/x/', 'x\\', 'x/', './x', 'x//', ' x '])
    t.same(folderScope(f), { folder: 'x', prefix: 'x/' }, `${JSON.stringify(f)} is x`);
  t.same(folderScope('a\\b//c/'), { folder: 'a/b/c', prefix: 'a/b/c/' });
  for (const f of ['..', '../x', 'x/..', 'a/../b', '..\\x', '.obsidian', 'a/.git', 'a\0b', 'a\uD800b'])
    t.equal(
      code(() => folderScope(f)),
      'invalid_path',
      `${JSON.stringify(f)} is refused`,
    );
  t.ok(inFolder(folderScope('x'), 'x/a.md'));
  t.notOk(inFolder(folderScope('x'), 'xy/a.md'), 'a sibling sharing the prefix is outside');
  t.ok(inFolder(folderScope('.'), 'anything.md'));
});

t.test('clampLimit', async (t) => {
  t.equal(clampLimit(undefined, 100, 20), 20);
  t.equal(clampLimit(undefined, 100), 100);
  t.equal(clampLimit(500, 100, 20), 100);
  t.equal(clampLimit(0, 100, 20), 1);
  t.equal(clampLimit(-5, 100, 20), 1);
  t.equal(clampLimit(7.9, 100, 20), 7);
  t.equal(clampLimit(Number.NaN, 100, 20), 100);
});

t.test('cursorCodec: opaque, versioned, bound to user, vault and tool', async (t) => {
  const isKey = (v: unknown): v is [string, number] =>
    Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'number';
  const a = cursorCodec('list_x', isKey);
  const b = cursorCodec('list_y', isKey);
  const alice = { principal: { user: 'alice', vaultId: 1 } };
  const c = a.encode(alice, ['p.md', 3]);
  t.match(c, /^c1\.[A-Za-z0-9_-]{12}\.[A-Za-z0-9_-]+$/);
  t.notMatch(c, /alice|p\.md/, 'names nobody and nothing in plain text');
  t.same(a.decode(alice, c), ['p.md', 3]);
  t.same(a.decode({ principal: { user: 'alice', vaultId: 1 } }, c), ['p.md', 3], 'any credential of the same user');
  t.equal(a.decode(alice, undefined), undefined);
  for (const [who, owner] of [
    ['another user', { principal: { user: 'bob', vaultId: 1 } }],
    ['another vault', { principal: { user: 'alice', vaultId: 2 } }],
  ] as const)
    t.equal(
      code(() => a.decode(owner, c)),
      'invalid_arguments',
      `refused for ${who}`,
    );
  t.equal(
    code(() => b.decode(alice, c)),
    'invalid_arguments',
    'refused by another tool',
  );
  for (const bad of [
    '',
    'x',
    'c2' + c.slice(2),
    c.slice(0, -2) + '!!',
    `${c.split('.').slice(0, 2).join('.')}.${Buffer.from('{"a":1}').toString('base64url')}`,
  ])
    t.equal(
      code(() => a.decode(alice, bad)),
      'invalid_arguments',
      `malformed ${JSON.stringify(bad)} refused`,
    );
});

t.test('tag keys', async (t) => {
  t.equal(tagKey(' #Project/Alpha '), 'project/alpha');
  t.same(tagKeys(['#A', 'a', '', '#', 'b']), ['a', 'b']);
  t.same(tagKeys(undefined), []);
});
