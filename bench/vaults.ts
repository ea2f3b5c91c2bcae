// Several vaults in one server against one big vault: the same notes (the largest public corpus ×N,
// ~10k notes at the default ×4) served once as one vault, and once split round-robin into ten vaults of
// ~1k notes, each bound to its own user. Prints, per layout: cold index time (start until every vault is
// indexed), keyword_search p50/p95 over MCP (each user querying their own vault), RSS after the index
// and after a GC; for the ten-vault layout also what one more (small) vault added live costs in idle
// memory. Each layout runs in a child process, so one's heap does not weigh on the other's RSS.
// Prints `name: value unit`.
// Usage: tsx bench/vaults.ts [copies=4] [rounds=20] [vaults=10]
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AdminClient } from '../src/host/admin/channel-client.js';
import { createApiKey } from '../src/host/auth/api-keys.js';
import { userByName } from '../src/host/auth/users.js';
import { startTestServer, type TestServer } from '../src/host/testing/harness.js';
import { benchCorpus } from '../test/fixtures/corpus.js';
import { percentile } from './lib/setup.js';

const CORPUS = benchCorpus('oldwinter-knowledge-garden');
const mib = (bytes: number) => Math.round(bytes / 1048576);
const QUERIES = ['Kubernetes', 'docker network', 'What do my notes say about Redis caching?', '保持健康'];
const FAMILIES = {
  files: { enabled: false },
  graph: { enabled: false },
  tasks: { enabled: false },
  transfer: { enabled: false },
};

const child = process.argv.indexOf('--child');
if (child < 0) {
  const [copies = '4', rounds = '20', vaults = '10'] = process.argv.slice(2);
  console.log(
    `machine: ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}, pglite embedded, load ${os.loadavg()[0].toFixed(1)}`,
  );
  for (const layout of ['one', 'many']) {
    const r = spawnSync(
      process.execPath,
      [...process.execArgv, '--expose-gc', import.meta.filename, '--child', layout, copies, rounds, vaults],
      { stdio: ['ignore', 'inherit', 'inherit'], timeout: 3_600_000 },
    );
    if (r.status !== 0) throw new Error(`the ${layout} layout failed (exit ${r.status})`);
  }
} else {
  const [layout, copies, rounds, vaults] = [
    process.argv[child + 1],
    Number(process.argv[child + 2]),
    Number(process.argv[child + 3]),
    Number(process.argv[child + 4]),
  ];
  await runLayout(layout as 'one' | 'many', copies, rounds, layout === 'one' ? 1 : vaults);
}

/** Every note path of the corpus ×copies, relative to a staging folder holding copy0…copyN-1. */
function notePaths(staging: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory() && !e.name.startsWith('.')) walk(p);
      else if (e.isFile() && e.name.endsWith('.md')) out.push(path.relative(staging, p));
    }
  };
  walk(staging);
  return out.sort();
}

async function runLayout(layout: 'one' | 'many', copies: number, rounds: number, count: number): Promise<void> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'exo-bench-vaults-'));
  const staging = path.join(tmp, 'staging');
  for (let i = 0; i < copies; i++) cpSync(CORPUS, path.join(staging, `copy${i}`), { recursive: true });
  const roots = Array.from({ length: count }, (_, i) => path.join(tmp, `v${i}`));
  notePaths(staging).forEach((rel, i) => {
    const to = path.join(roots[i % count], rel);
    mkdirSync(path.dirname(to), { recursive: true });
    cpSync(path.join(staging, rel), to);
  });
  rmSync(staging, { recursive: true, force: true });
  const names = roots.map((_, i) => `v${i}`);
  const t0 = Date.now();
  const server = await startTestServer({
    copyVaultFrom: roots[0],
    config: {
      ...(count > 1 ? { vaults: roots.slice(1).map((root, i) => ({ name: names[i + 1], path: root })) } : {}),
      ...(count > 1 ? { users: names.slice(1).map((n) => ({ name: `user-${n}`, vault: n })) } : {}),
      families: FAMILIES,
      admission: { callsPerMinute: 10_000_000 },
    },
  });
  try {
    await allIndexed(server);
    const notes = server.host.vaults.all().reduce((n, v) => n + (v.index?.status().indexed ?? 0), 0);
    const tag = `${layout === 'one' ? '1' : count}x${Math.round(notes / count)}`;
    console.log(`vaults_${tag}_notes: ${notes} notes in ${count} vault${count > 1 ? 's' : ''}`);
    console.log(`vaults_${tag}_cold_index: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    console.log(`vaults_${tag}_rss_indexed: ${mib(process.memoryUsage().rss)} MiB`);

    const keys = [server.key];
    for (const n of names.slice(1)) {
      const user = (await userByName(server.host.database.db, `user-${n}`))!;
      keys.push(
        (
          await createApiKey(server.host.database.db, {
            name: `bench-${n}`,
            scope: 'read',
            vaultId: user.vaultId!,
            userId: user.id,
          })
        ).raw,
      );
    }
    const times: number[] = [];
    for (const key of keys) {
      const client = await server.connect({ key });
      for (const query of QUERIES) await client.callTool({ name: 'keyword_search', arguments: { query } }); // warm
      // The same number of calls in both layouts: rounds per query kind, spread over the users.
      for (let r = 0; r < Math.ceil(rounds / keys.length); r++) {
        for (const query of QUERIES) {
          const s = process.hrtime.bigint();
          const res = (await client.callTool({ name: 'keyword_search', arguments: { query } })) as {
            isError?: boolean;
          };
          times.push(Number(process.hrtime.bigint() - s) / 1e6);
          if (res.isError) throw new Error(`keyword_search refused "${query}"`);
        }
      }
      await client.close();
    }
    console.log(
      `vaults_${tag}_keyword_p50: ${percentile(times, 50).toFixed(1)} ms (${times.length} calls over MCP, ${QUERIES.length} query kinds)`,
    );
    console.log(`vaults_${tag}_keyword_p95: ${percentile(times, 95).toFixed(1)} ms`);
    const idle = await settledRss();
    console.log(`vaults_${tag}_rss_idle: ${mib(idle.rss)} MiB (after GC; JS heap ${mib(idle.heap)} MiB)`);

    if (layout === 'many') {
      const admin = (await AdminClient.connect(server.host.admin!.socketPath))!;
      const extra = 5;
      for (let i = 0; i < extra; i++) {
        const root = path.join(tmp, `extra${i}`);
        mkdirSync(root);
        writeFileSync(path.join(root, 'Note.md'), `# Extra ${i}\n\nA small vault added live.\n`);
        await admin.post('/v1/vaults', { name: `extra${i}`, root });
      }
      await allIndexed(server);
      const after = await settledRss();
      const per = (a: number, b: number) => ((a - b) / extra / 1048576).toFixed(2);
      console.log(
        `vaults_added_live_idle_cost: ${per(after.heap, idle.heap)} MiB JS heap, ${per(after.rss, idle.rss)} MiB RSS per vault (${extra} one-note vaults added live, after GC; RSS moves with what the allocator returns)`,
      );
      admin.close();
    }
  } finally {
    await server.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

async function allIndexed(server: TestServer): Promise<void> {
  const deadline = Date.now() + 3_600_000;
  for (;;) {
    const all = server.host.vaults.all();
    if (all.every((v) => v.index?.status().ready && v.index.status().pending === 0)) return;
    if (Date.now() > deadline) throw new Error('vaults not indexed within the hour');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** RSS and JS heap after two GCs and a pause (the child runs with --expose-gc). */
async function settledRss(): Promise<{ rss: number; heap: number }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  await new Promise((r) => setTimeout(r, 500));
  gc?.();
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed };
}
