// /metrics as Prometheus scrapes it: refused without the bearer secret, and after a few tool calls a
// Prometheus text-format parser reads the calls back (durations by method and tool, results by refusal
// code), with the index, session and process gauges beside them.
import t from 'tap';
import { createRequire } from 'node:module';
import { mayScrape } from '../../../src/host/metrics/index.js';
import { startTestServer } from '../../../src/host/testing/harness.js';

type Family = {
  name: string;
  type: string;
  metrics: Array<{ labels?: Record<string, string>; value?: string; count?: string; buckets?: Record<string, string> }>;
};
const parse = createRequire(import.meta.url)('parse-prometheus-text-format') as (text: string) => Family[];

const TOKEN = 'metrics-secret-0123456789';
const server = await startTestServer({
  files: { 'A.md': '# A\n', 'B.md': '# B\n' },
  config: { metrics: { enabled: true, token: TOKEN } },
});
t.teardown(() => server.close());

const scrape = (headers: Record<string, string> = {}) => fetch(`${server.url}/metrics`, { headers });

t.test('only a scraper with the secret reads /metrics', async (t) => {
  t.equal((await scrape()).status, 401);
  t.equal((await scrape({ authorization: 'Bearer wrong-secret-0123456789' })).status, 401);
  t.equal(
    (await scrape({ authorization: `Bearer ${server.key}` })).status,
    401,
    'an MCP key is not the metrics secret',
  );
  t.equal((await scrape({ authorization: `Bearer ${TOKEN}` })).status, 200);
});

t.test('tool calls, refusals and the gauges parse back from the text format', async (t) => {
  const client = await server.connect();
  await client.listTools();
  for (let i = 0; i < 2; i++) await client.callTool({ name: 'list_notes', arguments: {} });
  const reader = await server.connect({ key: server.readKey });
  await reader.callTool({ name: 'create_note', arguments: { path: 'C.md', content: 'x' } });
  await server.host.index!.whenReady(undefined, 30_000);
  const deadline = Date.now() + 20_000;
  while ((server.host.index!.status().pending > 0 || server.host.index!.status().indexed < 2) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  // The families' health is read once per scrape, for every vault, whatever number of gauges show it.
  const host = server.host as unknown as { familyHealthByVault(): Promise<unknown> };
  const read = host.familyHealthByVault.bind(host);
  let healthReads = 0;
  host.familyHealthByVault = () => {
    healthReads++;
    return read();
  };
  const res = await scrape({ authorization: `Bearer ${TOKEN}` });
  t.equal(healthReads, 1, "one read of the families' health per scrape");
  t.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  const families = new Map(parse(text).map((f) => [f.name, f]));
  t.equal(
    families.get('mcp_server_operation_duration_seconds')?.type,
    'HISTOGRAM',
    'operation durations are a histogram',
  );
  // (the parser keeps no labels on histogram series, so their counts are read from the exposition lines)
  t.match(
    text,
    /^mcp_server_operation_duration_seconds_count\{mcp_method_name="tools\/call",gen_ai_tool_name="list_notes",error_type=""\} 2$/m,
    'two list_notes calls timed',
  );
  t.match(
    text,
    /^mcp_server_operation_duration_seconds_count\{mcp_method_name="tools\/list",gen_ai_tool_name="",error_type=""\} 1$/m,
    'tools/list is timed too',
  );
  t.ok(
    families
      .get('exocortex_tool_results_total')
      ?.metrics.some(
        (m) => m.labels?.gen_ai_tool_name === 'list_notes' && m.labels?.outcome === 'ok' && m.value === '2',
      ),
  );
  const results = families.get('exocortex_tool_results_total');
  t.ok(
    results?.metrics.some(
      (m) =>
        m.labels?.gen_ai_tool_name === 'create_note' &&
        m.labels?.outcome === 'refused' &&
        m.labels?.code === 'read_only' &&
        m.value === '1',
    ),
    "the read key's refused write, by code",
  );
  const notes = families.get('exocortex_index_notes')?.metrics.find((m) => m.labels?.vault === 'vault');
  t.ok(Number(notes?.value) >= 2, 'indexed notes per vault');
  t.ok(
    families.has('exocortex_index_pending') &&
      families.has('exocortex_worker_queue_depth') &&
      families.has('exocortex_audit_queue') &&
      families.has('exocortex_mcp_sessions'),
  );
  t.match(text, /^exocortex_db_pool_connections\{state="idle"\} [01]$/m, "the pool's connections (PGlite: one)");
  t.ok(families.has('exocortex_db_pool_waiting'));
  t.match(text, /^exocortex_db_pool_wait_seconds_count [1-9]\d*$/m, 'queries waited for a connection, and were timed');
  t.match(
    text,
    /^exocortex_family_health\{family="search",field="semantic",vault="vault"\} 0$/m,
    "families' health counts per vault (no embedding provider here)",
  );
  t.same(
    families.get('exocortex_embedding_backlog')?.metrics ?? [],
    [],
    'no embedding backlog sample while semantic search is off',
  );
  t.ok(
    families.has('process_cpu_user_seconds_total') && families.has('nodejs_eventloop_lag_seconds'),
    'the default process metrics',
  );
  t.notMatch(JSON.stringify([...families.values()]), /# A|A\.md/, 'no note content or path in any label');
});

t.test('loopback scrapes only when the operator allows them, and never through a proxy', async (t) => {
  t.notOk(mayScrape({ token: '', allowLoopback: false }, undefined, '127.0.0.1', false));
  t.ok(mayScrape({ token: '', allowLoopback: true }, undefined, '127.0.0.1', false));
  t.ok(mayScrape({ token: '', allowLoopback: true }, undefined, '::1', false));
  t.notOk(
    mayScrape({ token: '', allowLoopback: true }, undefined, '127.0.0.1', true),
    'a loopback reverse proxy forwards for someone else',
  );
  t.notOk(mayScrape({ token: '', allowLoopback: true }, undefined, '10.1.2.3', false));
  t.ok(mayScrape({ token: TOKEN, allowLoopback: false }, `Bearer ${TOKEN}`, '10.1.2.3', true));
});
