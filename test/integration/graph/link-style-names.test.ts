// Names as links are written (issue 43): graph, read and history-read tools take `Quarks` — the bare name
// every link in the vault uses — and find the note a wikilink from the vault root would; a name several
// notes share is refused with the candidates, never guessed; an exact path still wins.
import t from 'tap';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { refusalOf, textOf } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const server = await startTestServer({
  builtinDir: null,
  config: { plugins: ['notes', 'graph', 'history'].map((f) => path.join(root, 'plugins', f)) },
  files: {
    'physics/Quarks.md': '# Quarks\n\nup and down\n',
    'Index.md': 'See [[Quarks]] and [[Twin]].\n',
    'a/Twin.md': 'twin a\n',
    'b/Twin.md': 'twin b\n',
    'Solo.md': 'at the root\n',
    'deep/Solo.md': 'deeper\n',
  },
});
t.teardown(() => server.close());
await (server.host.services.named.get('index') as IndexService).whenReady(server.host.vaultHandle.id);
const client = await server.connect({});
const call = async (name: string, args: Record<string, unknown>) => {
  const r = await client.callTool({ name, arguments: args });
  if (r.isError) throw new Error(`${name}: ${textOf(r as { content?: unknown })}`);
  return r.structuredContent as any;
};
const refused = async (name: string, args: Record<string, unknown>) =>
  refusalOf(await client.callTool({ name, arguments: args }));

t.test('a link-style name finds its note in graph, read and history tools', async (t) => {
  t.same(
    (await call('get_backlinks', { path: 'Quarks' })).backlinks.map((b: any) => b.source),
    ['Index.md'],
  );
  t.equal((await call('get_links', { path: 'quarks' })).path, 'physics/Quarks.md', 'case-insensitive, as links are');
  t.equal((await call('read_note', { path: 'Quarks' })).path, 'physics/Quarks.md');
  t.equal((await call('get_note_outline', { path: 'Quarks.md' })).path, 'physics/Quarks.md');
  t.equal((await call('read_note_lines', { path: 'Quarks', start_line: 1 })).path, 'physics/Quarks.md');
  t.equal((await call('list_revisions', { path: 'Quarks' })).path, 'physics/Quarks.md');
});

t.test('an ambiguous name is refused with its candidates', async (t) => {
  for (const tool of ['get_backlinks', 'read_note']) {
    const r = await refused(tool, { path: 'Twin' });
    t.equal(r?.code, 'ambiguous_note', tool);
    t.match(String(r?.candidates), /a\/Twin\.md, b\/Twin\.md/);
  }
});

t.test('an exact path wins over a name; a name that matches nothing is not found', async (t) => {
  t.equal((await call('read_note', { path: 'Solo' })).content.trim(), 'at the root');
  t.equal((await call('read_note', { path: 'deep/Solo' })).content.trim(), 'deeper');
  t.equal((await refused('get_backlinks', { path: 'Nowhere' }))?.code, 'not_found');
});
