// Bases in notes and bases kept live, through an MCP client: read_note reports a note's ```base blocks and
// embedded ![[x.base#View]] as query_base arguments that answer; query_base sees notes created, edited, linked
// and deleted through the tools at once (the family's record set follows the index pipeline's changes).
import t from 'tap';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';

t.setTimeout(300_000);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const server = await startTestServer({
  builtinDir: null,
  files: {
    'Books/Dune.md': '---\nrating: 5\ntags: [book]\n---\n# Dune\n',
    'Books/Emma.md': '---\nrating: 3\ntags: [book]\n---\n# Emma\n',
    'Library.base': [
      'filters: file.hasTag("book")',
      'formulas:',
      '  back: file.backlinks.length',
      'views:',
      '  - {type: table, name: All, order: [file.name, rating]}',
      '  - {type: table, name: Good, filters: "rating >= 4", order: [file.name, rating, formula.back]}',
      '',
    ].join('\n'),
    'Home.md': [
      '# Home',
      '',
      '```base',
      'filters: rating < 4',
      'views: [{type: table, name: Low}]',
      '```',
      '',
      '![[Library.base#Good]]',
      '',
      '![[Missing.base]]',
      '',
    ].join('\n'),
  },
  config: {
    plugins: ['notes', 'graph', 'bases'].map((f) => path.join(root, 'plugins', f)),
    index: { watch: false, reconcileSeconds: 0 },
  },
});
t.teardown(() => server.close());
const client = await server.connect();
const index = server.host.services.named.get('index') as IndexService;
await index.whenReady(server.host.vaultHandle.id, 120_000);

type Query = { path?: string; block?: number; view?: string };
type Out = { rows: { path: string; values: Record<string, { type: string; value: unknown }> }[]; total: number };
const call = async (name: string, args: Record<string, unknown>) => {
  const r = await client.callTool({ name, arguments: args });
  if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content).slice(0, 400)}`);
  return r;
};
const query = async (args: Query) => (await call('query_base', args)).structuredContent as Out;

t.test('read_note reports the bases a note shows, as query_base arguments that answer', async (t) => {
  const r = await call('read_note', { path: 'Home.md' });
  const bases = (r.structuredContent as { bases?: { kind: string; line: number; target?: string; query: Query }[] })
    .bases;
  t.same(bases, [
    { kind: 'block', line: 3, query: { path: 'Home.md', block: 1 } },
    { kind: 'embed', line: 8, target: 'Library.base', query: { path: 'Library.base', view: 'Good' } },
    { kind: 'embed', line: 10, target: 'Missing.base', query: {} },
  ]);
  t.match((r.content as { text: string }[])[0].text, /query_base\(path="Library\.base", view="Good"\)/);
  t.same(
    (await query(bases![0].query)).rows.map((x) => x.path),
    ['Books/Emma.md'],
    'the block answers',
  );
  t.same(
    (await query(bases![1].query)).rows.map((x) => x.path),
    ['Books/Dune.md'],
    'the embed answers its view',
  );
  const plain = await call('read_note', { path: 'Books/Dune.md' });
  t.notOk('bases' in (plain.structuredContent as object), 'a note without bases has no bases field');
});

t.test('query_base follows notes created, edited, linked and deleted through the tools', async (t) => {
  const good = { path: 'Library.base', view: 'Good' };
  t.same(
    (await query(good)).rows.map((x) => x.path),
    ['Books/Dune.md'],
    'before',
  );
  await call('create_note', { path: 'Books/Ulysses.md', content: '---\nrating: 4\ntags: [book]\n---\n# Ulysses\n' });
  t.same(
    (await query(good)).rows.map((x) => x.path),
    ['Books/Dune.md', 'Books/Ulysses.md'],
    'a created note is a row at once',
  );
  await call('set_frontmatter', { path: 'Books/Dune.md', updates: { rating: 2 } });
  t.same(
    (await query(good)).rows.map((x) => x.path),
    ['Books/Ulysses.md'],
    'an edited property moves a row out',
  );
  await call('create_note', { path: 'Reviews.md', content: 'Loved [[Ulysses]].\n' });
  const linked = await query(good);
  t.same(linked.rows[0].values['formula.back'], { type: 'number', value: 1 }, 'a new link is a backlink at once');
  await call('delete_note', { path: 'Books/Ulysses.md' });
  t.same((await query(good)).rows, [], 'a deleted note is gone');
  t.same(
    (await query({ path: 'Library.base', view: 'All' })).rows.map((x) => x.path),
    ['Books/Dune.md', 'Books/Emma.md'],
    'the other view agrees',
  );
});
