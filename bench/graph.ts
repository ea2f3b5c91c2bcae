// Benchmarks of the graph, tasks and change-feed families on public corpus A (every vault, copied ×N):
// index time with the three contributors, events/s of a pass that changed many notes, get_backlinks / get_neighborhood(depth=3) / list_tasks /
// get_changes(500) p50 over MCP. Prints `name: value unit` lines. Usage: tsx bench/graph.ts [corpusRoot]
// Env: BENCH_COPIES (default 4), BENCH_ROUNDS (default 30). Copies the corpus; never modifies it.
import { appendFileSync, cpSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { startTestServer } from '../src/host/testing/harness.js';
import type { IndexService } from '../src/sdk/index-service.js';
import { benchCorpora } from '../test/fixtures/corpus.js';

const root = process.argv[2] ?? benchCorpora().root;
const COPIES = Number(process.env.BENCH_COPIES ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const plugins = ['graph', 'tasks', 'change-feed'].map((f) => new URL(`../plugins/${f}`, import.meta.url).pathname);

const staging = mkdtempSync(path.join(os.tmpdir(), 'exo-bench-graph-'));
const vaults = readdirSync(root).filter((d) => statSync(path.join(root, d)).isDirectory() && d !== 'LICENSES');
for (let i = 1; i <= COPIES; i++)
  for (const v of vaults) cpSync(path.join(root, v), path.join(staging, `copy-${i}`, v), { recursive: true });

console.log(`machine: ${os.cpus()[0]?.model ?? 'unknown'} x${os.cpus().length}, node ${process.version}`);
console.log(`data: corpus A (${vaults.join(', ')}) x${COPIES}`);
const t0 = performance.now();
const server = await startTestServer({
  builtinDir: null,
  copyVaultFrom: staging,
  config: { plugins, index: { watch: false, reconcileSeconds: 0 } },
});
rmSync(staging, { recursive: true, force: true });
const vaultId = server.host.vaultHandle.id;
await (server.host.services.named.get('index') as IndexService).whenReady(vaultId, 3_600_000);
const indexMs = performance.now() - t0;
const db = server.host.database.db;
const count = async (q: ReturnType<typeof sql<{ n: string }>>) => Number((await q.execute(db)).rows[0].n);
const notes = await count(sql`SELECT count(*) AS n FROM notes`);
const links = await count(sql`SELECT count(*) AS n FROM graph_links`);
const tasks = await count(sql`SELECT count(*) AS n FROM tasks_items`);
const events = await count(sql`SELECT count(*) AS n FROM change_events`);
console.log(`notes: ${notes} notes`);
console.log(`links: ${links} links`);
console.log(`tasks: ${tasks} tasks`);
console.log(
  `index_with_contributors: ${(indexMs / 1000).toFixed(1)} s (${(notes / (indexMs / 1000)).toFixed(0)} notes/s)`,
);
console.log(`feed_events_initial_build: ${events} events (a first build is recorded silently)`);

// A pass that finds many changed notes: every event itemised, with the three contributors at work.
const TOUCH = Number(process.env.BENCH_TOUCH ?? 2000);
const touched = (await sql<{ path: string }>`SELECT path FROM notes ORDER BY id LIMIT ${TOUCH}`.execute(db)).rows.map(
  (r) => r.path,
);
for (const p of touched) appendFileSync(path.join(server.vaultDir, p), '\nedited by the bench\n');
const before = await count(sql`SELECT count(*) AS n FROM change_events`);
const p0 = performance.now();
await server.host.index!.runPass();
const passS = (performance.now() - p0) / 1000;
const recorded = (await count(sql`SELECT count(*) AS n FROM change_events`)) - before;
console.log(
  `feed_pass_events: ${recorded} events in ${passS.toFixed(1)} s (${(recorded / passS).toFixed(0)} events/s, whole pass incl. reading and parsing)`,
);

const client = await server.connect();
async function p50(name: string, args: () => Record<string, unknown>): Promise<void> {
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const a = args();
    const s = performance.now();
    const r = await client.callTool({ name, arguments: a });
    times.push(performance.now() - s);
    if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
  }
  times.sort((x, y) => x - y);
  console.log(
    `${name}${args().depth ? `_depth${args().depth}` : ''}_p50: ${times[Math.floor(times.length / 2)].toFixed(1)} ms (p95 ${times[Math.floor(times.length * 0.95)].toFixed(1)} ms)`,
  );
}
// The most linked-to notes: the heavy end of backlinks and neighbourhoods.
const hubs = (
  await sql<{
    path: string;
  }>`SELECT n.path FROM graph_links l JOIN notes n ON n.id = l.target_id GROUP BY n.path ORDER BY count(*) DESC LIMIT 10`.execute(
    db,
  )
).rows.map((r) => r.path);
let i = 0;
await p50('get_backlinks', () => ({ path: hubs[i++ % hubs.length], limit: 50 }));
await p50('get_neighborhood', () => ({ path: hubs[i++ % hubs.length], depth: 3, limit: 200 }));
await p50('list_tasks', () => ({ status: 'open', due_by: '2024-12-31', limit: 100 }));
await p50('list_tasks', () => ({ status: 'any', tags: ['task'], priority: ['high', 'highest'], limit: 100 }));
const first = Number((await sql<{ s: string }>`SELECT min(seq) AS s FROM change_events`.execute(db)).rows[0].s);
await p50('get_changes', () => ({ since: `ev:${first + (i++ % 10) * 100}`, limit: 500 }));
await server.close();
