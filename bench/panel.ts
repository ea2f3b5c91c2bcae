// The operator panel's pages on a ~10k-note vault (the largest public corpus ×4 by default) with a month of
// audit rows (BENCH_USAGE_ROWS, default 100k) and agent edits: each page fetched over loopback as a
// signed-in admin, BENCH_ROUNDS times (default 15) after one warm-up, with the same-run baseline of /health
// (the server's cheapest JSON answer). Prints `name: value unit` (p50, p95 and the spread, min–max).
// Usage: tsx bench/panel.ts [copies=4]
import { cpSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { usersPasswdOp } from '../src/host/admin/oauth-operations.js';
import { startTestServer } from '../src/host/testing/harness.js';
import { benchCorpus } from '../test/fixtures/corpus.js';
import { median, percentile } from './lib/setup.js';

const copies = Number(process.argv[2] ?? 4);
const rounds = Number(process.env.BENCH_ROUNDS ?? 15);
const usageRows = Number(process.env.BENCH_USAGE_ROWS ?? 100_000);
const CORPUS = benchCorpus('oldwinter-knowledge-garden');

console.log(
  `machine: ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}, pglite embedded, load ${os.loadavg()[0].toFixed(1)}`,
);
const server = await startTestServer({
  config: {
    families: {
      files: { enabled: false },
      graph: { enabled: false },
      tasks: { enabled: false },
      transfer: { enabled: false },
    },
  },
});
for (let i = 0; i < copies; i++) cpSync(CORPUS, path.join(server.vaultDir, `copy${i}`), { recursive: true });
const t0 = Date.now();
await server.host.index!.runPass({ force: false });
await server.host.index!.whenIdle();
const notes = Number(
  (await sql<{ n: string }>`SELECT count(*) AS n FROM notes`.execute(server.host.database.db)).rows[0].n,
);
console.log(`panel.notes: ${notes} notes`);
console.log(`panel.index_seconds: ${((Date.now() - t0) / 1000).toFixed(1)} s`);

// A month of audit rows spread over 30 days, 12 tools, 1% refusals, 2% empty searches.
const tools = [
  'read_note',
  'keyword_search',
  'hybrid_search',
  'list_notes',
  'edit_note',
  'get_backlinks',
  'search',
  'fetch',
  'get_changes',
  'create_note',
  'read_multiple_notes',
  'get_tags',
];
await sql`INSERT INTO usage_logs (at, vault_id, credential_id, credential_name, tool, family, params, duration_ms, response_bytes, outcome, refusal_code, result_count)
  SELECT now() - (random() * interval '30 days'), ${server.host.vaultHandle.id}, 'k' || (g % 5), 'key-' || (g % 5), (${sql.val(tools)}::text[])[1 + g % 12], 'notes',
    '{"query":"q' || (g % 500) || '"}', random() * 200, 1000, CASE WHEN g % 100 = 0 THEN 'refused' ELSE 'ok' END, CASE WHEN g % 100 = 0 THEN 'rate_limited' END,
    CASE WHEN g % 50 = 0 THEN 0 ELSE 5 END
  FROM generate_series(1, ${usageRows}) AS g`.execute(server.host.database.db);
await sql`ANALYZE usage_logs`.execute(server.host.database.db);
const agent = await server.connect();
const some = (
  await sql<{ path: string }>`SELECT path FROM notes ORDER BY path LIMIT 30`.execute(server.host.database.db)
).rows;
for (const r of some)
  await agent.callTool({
    name: 'replace_in_note',
    arguments: { path: r.path, pattern: '\n', replacement: '\n\n', max_occurrences: 1 },
  });
await server.host.audit.flush();

await usersPasswdOp(server.host.operations, { name: 'operator', password: 'bench-password-1' });
const base = server.url;
const jar: string[] = [];
const get = (p: string) => fetch(base + p, { redirect: 'manual', headers: { cookie: jar.join('; ') } });
const signInPage = await get('/admin/sign-in');
for (const c of signInPage.headers.getSetCookie()) jar.push(c.split(';')[0]);
const csrf = /name="_csrf" value="([^"]+)"/.exec(await signInPage.text())![1];
const signed = await fetch(`${base}/admin/sign-in`, {
  method: 'POST',
  redirect: 'manual',
  headers: { cookie: jar.join('; '), 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({ _csrf: csrf, user: 'operator', password: 'bench-password-1' }).toString(),
});
for (const c of signed.headers.getSetCookie()) jar.push(c.split(';')[0]);

const pages = [
  '/health',
  '/admin/',
  '/admin/usage',
  '/admin/usage?window=30d',
  '/admin/credentials',
  '/admin/edits',
  `/admin/edits/note?path=${encodeURIComponent(some[0].path)}`,
  '/admin/index',
  '/admin/danger',
  `/admin/notes/${some[1].path.split('/').map(encodeURIComponent).join('/')}`,
];
for (const p of pages) {
  const first = await get(p);
  if (first.status !== 200) throw new Error(`${p} answered ${first.status}`);
  await first.arrayBuffer();
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const s = performance.now();
    const r = await get(p);
    await r.arrayBuffer();
    times.push(performance.now() - s);
  }
  const name = p
    .replace(/^\/admin\/?/, 'admin/')
    .replace(/\?.*$/, (q) => (q.includes('30d') ? '_30d' : ''))
    .replace(/\/notes\/.*$/, '/notes')
    .replace(/[^a-z0-9_/]/gi, '_');
  console.log(
    `panel.${name}.p50: ${median(times).toFixed(1)} ms (p95 ${percentile(times, 95).toFixed(1)}, min ${Math.min(...times).toFixed(1)}, max ${Math.max(...times).toFixed(1)}, ${rounds} rounds)`,
  );
}
await server.close();
