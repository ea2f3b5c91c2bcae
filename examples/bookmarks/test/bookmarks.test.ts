// The family's own tests, written as its author would in its own package: the SDK's test kit starts a real
// Exocortex host with only this family loaded (from the build), and a real MCP client calls its tools.
import t from 'tap';
import { fileURLToPath } from 'node:url';
import { refusalOf, startFamilyTestServer } from 'exocortex/testkit';

const family = fileURLToPath(new URL('../dist/src/family.js', import.meta.url));
const server = await startFamilyTestServer({ families: [family], config: { bookmarks: { max: 2 } } });
t.teardown(() => server.close());

t.test('adds, lists by tag, and refuses a duplicate and a full vault with its own codes', async (t) => {
  const client = await server.connect();
  const add = (url: string, tags: string[] = []) =>
    client.callTool({ name: 'add_bookmark', arguments: { url, title: `Page ${url}`, tags } });
  t.notOk(refusalOf(await add('https://example.org/a', ['read-later'])));
  t.equal(refusalOf(await add('https://example.org/a'))?.code, 'bookmark_exists');
  t.notOk(refusalOf(await add('https://example.org/b')));
  t.equal(
    refusalOf(await add('https://example.org/c'))?.code,
    'bookmarks_full',
    'bookmarks.max from the config applies',
  );
  const listed = (await client.callTool({ name: 'list_bookmarks', arguments: { tag: 'read-later' } })) as {
    structuredContent: { bookmarks: Array<{ url: string }> };
  };
  t.same(
    listed.structuredContent.bookmarks.map((b) => b.url),
    ['https://example.org/a'],
  );
  const ro = await server.connect({ key: server.readKey });
  t.equal(
    refusalOf(await ro.callTool({ name: 'add_bookmark', arguments: { url: 'https://example.org/d', title: 'd' } }))
      ?.code,
    'read_only',
    'a read-only key cannot add',
  );
});
