// Every index-backed search tool says when the index has not caught up with the vault, in its text and
// as structuredContent.index_pending / index_notice, and says nothing once it has.
import t from 'tap';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService, IndexStatus } from '../../../src/sdk/index-service.js';
import { textOf } from '../../../src/host/testing/testkit.js';

const server = await startTestServer({ files: { 'Redis.md': '# Redis\n\nCaching notes about redis eviction.\n' } });
t.teardown(() => server.close());
const client = await server.connect();
const index = server.host.services.named.get('index') as IndexService;
await index.whenReady(server.host.vaultHandle.id);

const calls: Array<[string, Record<string, unknown>]> = [
  ['keyword_search', { query: 'redis' }],
  ['hybrid_search', { query: 'redis' }],
  ['search', { query: 'redis' }],
  ['search_regex', { pattern: 'redis' }],
  ['get_tags', {}],
  ['fetch', { id: 'Redis.md' }],
];

t.test('caught up: no caveat', async (t) => {
  for (const [name, args] of calls) {
    const r = await client.callTool({ name, arguments: args });
    t.notOk(r.isError, `${name}: ${textOf(r)}`);
    t.notOk('index_pending' in ((r.structuredContent as object) ?? {}), name);
  }
});

t.test('during the first scan: every search tool says so', async (t) => {
  // Hold the status at what a first scan of a big vault reports (the pipeline itself is real and idle).
  const real = index.status.bind(index);
  const building = (id: number): IndexStatus => ({
    ...real(id),
    ready: false,
    scanned: 2469,
    indexed: 250,
    pending: 50,
  });
  (index as { status: typeof index.status }).status = building;
  t.teardown(() => ((index as { status: typeof index.status }).status = real));
  for (const [name, args] of calls) {
    const r = await client.callTool({ name, arguments: args });
    t.notOk(r.isError, `${name}: ${textOf(r)}`);
    const s = r.structuredContent as { index_pending?: number; index_notice?: string };
    t.equal(s.index_pending, 2219, name);
    t.match(s.index_notice, /250 of 2469 notes/, name);
    const text = textOf(r);
    if (name === 'search' || name === 'fetch')
      t.equal((JSON.parse(text) as { index_pending?: number }).index_pending, 2219, `${name}'s JSON text carries it`);
    else t.match(text.split('\n')[0], /The index is still being built/, `${name} says it first`);
  }
});
