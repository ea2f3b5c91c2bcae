// find_related end to end with the search family's embeddings service and a loopback embedding server:
// nearest notes by averaged chunk vectors, the note itself excluded, one row per note with its best
// section, the limit, an un-embedded note answering empty, and the refusal when the provider is down.
import t from 'tap';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { refusalOf as refusalOfResult, textOf as textOfResult } from '../../../src/host/testing/testkit.js';
import type { IndexService } from '../../../src/sdk/index-service.js';
import type { EmbeddingsService } from '../../../plugins/search/embeddings/types.js';
import { startEmbeddingServer, waitEmbedded as waitEmbeddedFor } from '../search/embedding-server.js';

const textOf = (r: unknown): string => textOfResult(r as { content?: unknown });
const refusalOf = (r: unknown) => refusalOfResult(r as { isError?: boolean; content?: unknown });

const fake = await startEmbeddingServer(256);
const embedding = {
  provider: 'openai',
  baseUrl: `${fake.url}/v1`,
  model: 'hash-256',
  dimensions: 256,
  pollMs: 20,
  backoffMs: 20,
  retries: 0,
  batchSize: 8,
};
const off = { enabled: false };
const server = await startTestServer({
  files: {
    'Garden/Tomatoes.md':
      '# Tomatoes\n\nWater the tomato plants deeply twice a week in summer heat. Aphids and hornworms eat tomato leaves.\n',
    'Kitchen/Tomato Sauce.md':
      '# Tomato Sauce\n\n## Storage\n\nFreeze the jars of sauce for winter.\n\n## Growing\n\nWater tomato plants deeply in summer heat; hornworms and aphids eat the tomato leaves.\n',
    'Kitchen/Bread.md': '# Bread\n\nKnead the dough, let it rise, bake the loaf in a hot oven.\n',
    'Work/Meetings.md': '# Meetings\n\nWeekly planning meeting agenda, minutes and action items for the team.\n',
    'Work/Budget.md':
      '# Budget\n\nWeekly budget planning meeting: agenda, minutes and action items for the finance team.\n',
  },
  config: {
    families: { files: off, tasks: off, notes: off, 'change-feed': off, transfer: off },
    search: { embedding },
    index: { watch: false, reconcileSeconds: 0 },
  },
});
t.teardown(async () => {
  await server.close();
  await fake.close();
});
const vaultId = server.host.vaultHandle.id;
const index = server.host.services.named.get('index') as IndexService;
await index.whenReady(vaultId, 60_000);
const svc = () => server.host.manager.registry.providedService('embeddings') as EmbeddingsService;
const client = await server.connect();

const waitEmbedded = (n: number) => waitEmbeddedFor(() => svc().counts(vaultId), n);
type Related = {
  path: string;
  count: number;
  related: Array<{
    path: string;
    title: string;
    score: number;
    section: string | null;
    snippet: string | null;
    stale: boolean;
  }>;
};
async function related(args: Record<string, unknown>): Promise<{ out: Related; text: string }> {
  const r = await client.callTool({ name: 'find_related', arguments: args });
  if (r.isError) throw new Error(textOf(r));
  return { out: r.structuredContent as Related, text: textOf(r) };
}

t.test('find_related is listed when a provider is configured', async (t) => {
  t.ok((await client.listTools()).tools.some((x) => x.name === 'find_related'));
});

t.test('nearest notes by meaning, best section first, the note itself excluded', async (t) => {
  await waitEmbedded(5);
  const { out, text } = await related({ path: 'Garden/Tomatoes.md' });
  t.equal(out.path, 'Garden/Tomatoes.md');
  t.equal(out.related[0].path, 'Kitchen/Tomato Sauce.md', 'the note about the same plants comes first');
  t.match(out.related[0].section, /Growing/, 'the locator names the section that matched');
  t.match(out.related[0].snippet, /tomato plants/);
  t.notOk(
    out.related.some((r) => r.path === 'Garden/Tomatoes.md'),
    'never the note itself',
  );
  t.equal(new Set(out.related.map((r) => r.path)).size, out.related.length, 'one row per note');
  t.equal(out.count, 4);
  const scores = out.related.map((r) => r.score);
  t.same(
    scores,
    [...scores].sort((a, b) => b - a),
    'best first',
  );
  t.match(
    text,
    /^4 related notes for `Garden\/Tomatoes\.md`:\n- \*\*Tomato Sauce\*\* \(`Kitchen\/Tomato Sauce\.md`\) § #\d+ .*Growing.* — sim: 0\.\d+/,
  );
  const one = await related({ path: 'Work/Meetings', limit: 1 });
  t.same(
    one.out.related.map((r) => r.path),
    ['Work/Budget.md'],
    'limit, and a path without .md',
  );
  t.equal(
    refusalOf(await client.callTool({ name: 'find_related', arguments: { path: 'Nowhere.md' } }))!.code,
    'not_found',
  );
});

t.test(
  'a note not embedded yet answers empty and says why; a provider outage is not a refusal for stored vectors',
  async (t) => {
    fake.down = true;
    await server.host.vaultHandle.fs.create('Garden/New.md', Buffer.from('# New\n\nFresh note about tomato plants.\n'));
    await index.noteWritten(vaultId, 'Garden/New.md');
    const { out, text } = await related({ path: 'Garden/New.md' });
    t.equal(out.count, 0);
    t.match(text, /may not be embedded yet/);
    const stored = await related({ path: 'Garden/Tomatoes.md', limit: 2 });
    t.equal(stored.out.count, 2, 'stored vectors still answer while the provider is down');
    fake.down = false;
  },
);
