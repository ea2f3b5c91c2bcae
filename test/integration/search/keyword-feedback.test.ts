// keyword_search's optional ranking stages, switched on through search.ranking (both are off by default): the
// proximity bonus (a note where the question's words sit together gets it, says so in its `why`, and ranks
// first) and RM3 feedback (a question's expansion terms bring in a note that shares its best notes' words,
// and a title lookup keeps its exact title first). Real host, index pipeline and MCP client on a small vault.
import t from 'tap';
import { textOf } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';
import type { KeywordIndexService } from '../../../plugins/search/family.js';

type ToolResult = { isError?: boolean; structuredContent?: unknown };
type Row = { path: string; why?: string };

const filler = 'Other words fill this note so that both notes have the same length and the same counts here.';
const server = await startTestServer({
  files: {
    // Near holds the question's words side by side, Apart the same words far apart (and Near is the longer note).
    'Near.md': `# Near\n\n${filler}\nThe garden irrigation schedule runs at dawn.\n${filler}\n${filler}\n`,
    'Apart.md': `# Apart\n\nThe garden is quiet. ${filler} The irrigation pump is new. ${filler} Dawn is when it runs, on a weekly schedule.\n`,
    'Sourdough starter.md': '# Sourdough starter\n\nFeed the starter flour and water; the levain rises overnight.\n',
    'Levain notes.md': '# Levain notes\n\nA levain ferments slowly; flour and water, kept warm, rises by morning.\n',
    'Bread basics.md': '# Bread basics\n\nHow to bake bread: knead the dough, proof the dough, bake the bread.\n',
  },
  config: {
    families: {
      files: { enabled: false },
      graph: { enabled: false },
      tasks: { enabled: false },
      notes: { enabled: false },
    },
    search: { ranking: { proximity: 0.3, feedbackDocs: 2, feedbackMinTerms: 2 } },
  },
});
t.teardown(() => server.close());
const index = server.host.services.named.get('index') as IndexService;
const ready = await index.whenReady(server.host.vaultHandle.id, 60_000);
const client = await server.connect();
// Both stages run on the in-memory ranker: wait for it, as a long-running server has it.
await (
  server.host.manager.registry.providedService('search-keyword') as KeywordIndexService | undefined
)?.memory?.ensure(server.host.vaultHandle.id);
t.ok(ready, 'the index finished its initial scan');

async function rows(query: string): Promise<Row[]> {
  const r = (await client.callTool({ name: 'keyword_search', arguments: { query, limit: 10 } })) as ToolResult;
  if (r.isError) t.fail(textOf(r as never));
  return (r.structuredContent as { rows: Row[] }).rows;
}

t.test('proximity: the note holding the words together ranks first and its why says how near', async (t) => {
  const out = await rows('when does the garden irrigation schedule run');
  t.equal(out[0]?.path, 'Near.md');
  t.match(out[0]?.why, /near \d+\.\d\d/);
  t.ok(out.findIndex((r) => r.path === 'Apart.md') > 0, 'the note with the words far apart is found, below');
});

t.test('feedback: a question brings in a note sharing its best notes’ words, marked in its why', async (t) => {
  const out = await rows('how do I feed a sourdough starter');
  t.equal(out[0]?.path, 'Sourdough starter.md');
  const levain = out.find((r) => r.path === 'Levain notes.md');
  t.ok(levain, 'a note holding none of the query words but the expansion (levain, flour, water)');
  t.match(levain?.why ?? '', /feedback \d+\.\d\d/);
});

t.test('an exact title keeps its place: no feedback for a lookup', async (t) => {
  const out = await rows('Bread basics');
  t.equal(out[0]?.path, 'Bread basics.md');
  t.notMatch(out[0]?.why ?? '', /feedback/);
});
