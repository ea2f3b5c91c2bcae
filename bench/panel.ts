// The operator panel's pages on a ~10k-note vault (the largest public corpus ×4 by default) with a month of
// audit rows (BENCH_USAGE_ROWS, default 100k, written with their hourly rollups and timed against plain
// inserts) and agent edits: each page fetched over loopback as a
// signed-in admin, BENCH_ROUNDS times (default 15) after one warm-up, with the same-run baseline of /health
// (the server's cheapest JSON answer). Prints `name: value unit` (p50, p95 and the spread, min–max).
// Usage: tsx bench/panel.ts [copies=4]
import { cpSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { usersPasswdOp } from '../src/host/admin/oauth-operations.js';
import { startTestServer } from '../src/host/testing/harness.js';
import type { UsageRow } from '../src/host/audit/batch-writer.js';
import { writeBatchSql } from '../src/host/audit/rollup.js';
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
// Written the way the server writes them (writeBatchSql: usage_logs rows and their hourly rollups in one statement),
// in batches of 200 (the server's are up to audit.batchSize, 1,000), timed against the same batches inserted
// plainly into a copy of usage_logs (the write path before rollups) in the same run.
const db = server.host.database.db;
const vaultId = server.host.vaultHandle.id;
const row = (g: number, at: Date): UsageRow => ({
  at,
  vaultId,
  credentialId: `k${g % 5}`,
  credentialName: `key-${g % 5}`,
  tool: tools[g % 12],
  family: 'notes',
  params: `{"query":"q${g % 500}"}`,
  durationMs: Math.random() * 200,
  responseBytes: 1000,
  outcome: g % 100 === 0 ? 'refused' : 'ok',
  refusalCode: g % 100 === 0 ? 'rate_limited' : null,
  resultCount: g % 50 === 0 ? 0 : 5,
});
await sql`CREATE TABLE usage_logs_plain (LIKE usage_logs INCLUDING ALL)`.execute(db);
const plainInsert = (batch: UsageRow[]) =>
  db
    .insertInto('usage_logs_plain')
    .values(
      batch.map((r) => ({
        at: r.at,
        vault_id: r.vaultId,
        credential_id: r.credentialId,
        credential_name: r.credentialName,
        tool: r.tool,
        family: r.family,
        params: r.params,
        duration_ms: r.durationMs,
        response_bytes: r.responseBytes,
        outcome: r.outcome,
        refusal_code: r.refusalCode,
        result_count: r.resultCount ?? null,
      })),
    )
    .execute();
const writeTimes = {
  rollup: [] as number[],
  plain: [] as number[],
  liveRollup: [] as number[],
  livePlain: [] as number[],
};
const timed = async (into: number[], run: () => Promise<unknown>) => {
  const s = performance.now();
  await run();
  into.push(performance.now() - s);
};
const month = 30 * 86_400_000;
for (let g = 0; g < usageRows; g += 200) {
  const batch = Array.from({ length: Math.min(200, usageRows - g) }, (_, i) =>
    row(g + i, new Date(Date.now() - Math.random() * month)),
  );
  // Alternate which goes first so neither always meets a warmer cache.
  if ((g / 200) % 2) {
    await timed(writeTimes.rollup, () => writeBatchSql(batch).execute(db));
    await timed(writeTimes.plain, () => plainInsert(batch));
  } else {
    await timed(writeTimes.plain, () => plainInsert(batch));
    await timed(writeTimes.rollup, () => writeBatchSql(batch).execute(db));
  }
}
// Live batches (calls of the last second, as a busy server writes them; 200 a batch here), 50 of each.
for (let i = 0; i < 50; i++) {
  const batch = Array.from({ length: 200 }, (_, j) => row(i * 200 + j, new Date(Date.now() - Math.random() * 1000)));
  await timed(writeTimes.livePlain, () => plainInsert(batch));
  await timed(writeTimes.liveRollup, () => writeBatchSql(batch).execute(db));
}
await sql`DROP TABLE usage_logs_plain`.execute(db);
const perBatch = (xs: number[]) =>
  `${median(xs).toFixed(2)} ms (min ${Math.min(...xs).toFixed(2)}, max ${Math.max(...xs).toFixed(2)}, ${xs.length} batches)`;
console.log(`panel.audit_batch_plain.p50: ${perBatch(writeTimes.plain)}`);
console.log(
  `panel.audit_batch_rollup.p50: ${perBatch(writeTimes.rollup)} (30-day spread: each row its own rollup key)`,
);
console.log(
  `panel.audit_batch_rollup_ratio: ${(median(writeTimes.rollup) / median(writeTimes.plain)).toFixed(2)} x plain`,
);
console.log(`panel.audit_batch_live_plain.p50: ${perBatch(writeTimes.livePlain)}`);
console.log(`panel.audit_batch_live_rollup.p50: ${perBatch(writeTimes.liveRollup)}`);
console.log(
  `panel.audit_batch_live_ratio: ${(median(writeTimes.liveRollup) / median(writeTimes.livePlain)).toFixed(2)} x plain`,
);
console.log(
  `panel.usage_hourly_rows: ${(await sql<{ n: string }>`SELECT count(*) AS n FROM usage_hourly`.execute(db)).rows[0].n} rollup rows for ${usageRows + 10_000} audit rows`,
);
await sql`ANALYZE usage_logs`.execute(db);
await sql`ANALYZE usage_hourly`.execute(db);
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
  '/admin/users',
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
