// bench/history: what the history family costs the write path and what it stores. In one run, alternating
// history off and on (same process, same vault shape): 8 concurrent writers appending to their own notes
// (edit_note with expected_hash) → writes/s each way and the ratio; then with history on, the store's
// bytes per 1,000 small edits, and list_revisions / diff_revisions p50 on a note with 200 revisions. Also the
// process's CPU ms per write each way: other jobs on the machine move it far less than they move writes/s.
// Usage: tsx bench/history.ts   Env: BENCH_SECONDS (6), BENCH_ROUNDS (3).
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestServer, type TestServer } from '../src/host/testing/harness.js';
import type { IndexService } from '../src/sdk/index-service.js';
import { machine, median, percentile, ROOT } from './lib/setup.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WRITERS = 8;
const NOTES_PER_WRITER = 4;
const line = (name: string, value: number, unit: string, note = '') =>
  console.log(`${name}: ${value.toFixed(value < 10 ? 2 : 0)} ${unit}${note ? ` (${note})` : ''}`);

const body = (i: number) =>
  `---\ntags: [bench]\n---\n# Note ${i}\n\n${'A paragraph of ordinary prose about nothing in particular. '.repeat(20)}\n`;

async function start(history: boolean): Promise<TestServer> {
  const families = ['notes', 'change-feed', ...(history ? ['history'] : [])].map((f) => path.join(ROOT, 'plugins', f));
  const files: Record<string, string> = {};
  for (let i = 0; i < WRITERS * NOTES_PER_WRITER; i++) files[`bench/n${i}.md`] = body(i);
  const server = await startTestServer({
    builtinDir: null,
    files,
    config: {
      plugins: families,
      admission: { callsPerMinute: 10_000_000, writesPerMinute: 10_000_000, concurrency: { read: 64, write: WRITERS } },
    },
  });
  await (server.host.services.named.get('index') as IndexService).whenReady(server.host.vaultHandle.id);
  return server;
}

async function hashOf(c: Client, p: string): Promise<string> {
  const r = await c.callTool({ name: 'read_note', arguments: { path: p } });
  return (r.structuredContent as { content_hash: string }).content_hash;
}

/** Writes/s in the window, and the process's CPU time per write (all threads: PGlite, workers, the clients). */
async function writesPerSecond(server: TestServer): Promise<{ rate: number; cpuMs: number }> {
  const clients = await Promise.all(Array.from({ length: WRITERS }, () => server.connect()));
  const hashes = new Map<string, string>();
  for (let i = 0; i < WRITERS * NOTES_PER_WRITER; i++)
    hashes.set(`bench/n${i}.md`, await hashOf(clients[0], `bench/n${i}.md`));
  // A short warm-up (workers, statement caches), then the measured window.
  let done = 0;
  let refusals = 0;
  const run = async (seconds: number) => {
    const end = performance.now() + seconds * 1000;
    await Promise.all(
      clients.map(async (c, w) => {
        let k = 0;
        while (performance.now() < end) {
          const p = `bench/n${w * NOTES_PER_WRITER + (k++ % NOTES_PER_WRITER)}.md`;
          const r = await c.callTool({
            name: 'edit_note',
            arguments: { path: p, content: `\n- line ${k}`, append: true, expected_hash: hashes.get(p) },
          });
          if (r.isError) {
            refusals++;
            hashes.set(p, await hashOf(c, p));
          } else {
            hashes.set(p, (r.structuredContent as { content_hash: string }).content_hash);
            done++;
          }
        }
      }),
    );
  };
  await run(1);
  done = 0;
  refusals = 0;
  const cpu0 = process.cpuUsage();
  await run(SECONDS);
  const cpu = process.cpuUsage(cpu0);
  if (refusals) console.log(`# ${refusals} refused writes in the window (re-read and retried)`);
  await Promise.all(clients.map((c) => c.close()));
  return { rate: done / SECONDS, cpuMs: (cpu.user + cpu.system) / 1000 / Math.max(1, done) };
}

console.log(
  `# bench/history on ${machine()}; ${WRITERS} writers × ${NOTES_PER_WRITER} notes of ~1.3 KB, in-process server (notes, change-feed ± history), ${SECONDS} s windows, ${ROUNDS} rounds alternating off/on`,
);
console.log(
  `# load average at start: ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(', ')} (other work on the machine)`,
);
const off: number[] = [];
const on: number[] = [];
const offCpu: number[] = [];
const onCpu: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  for (const history of [false, true]) {
    const server = await start(history);
    try {
      const m = await writesPerSecond(server);
      (history ? on : off).push(m.rate);
      (history ? onCpu : offCpu).push(m.cpuMs);
    } finally {
      await server.close();
    }
  }
}
console.log(
  `# load average after the rounds: ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(', ')}`,
);
const spread = (xs: number[]) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;
line('history_off_writes_per_s', median(off), 'writes/s', `median of ${ROUNDS}, spread ${spread(off)}`);
line('history_on_writes_per_s', median(on), 'writes/s', `median of ${ROUNDS}, spread ${spread(on)}`);
const ratios = on.map((v, i) => v / off[i]);
line('history_on_vs_off', median(ratios), 'ratio', `per-round on/off: ${ratios.map((x) => x.toFixed(2)).join(', ')}`);
// CPU per write is what bounds a saturated server, and other jobs on the machine move it far less than
// they move writes/s: off/on is the throughput ratio a CPU-bound server would see.
const spread2 = (xs: number[]) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}`;
line('history_off_cpu_ms_per_write', median(offCpu), 'ms', `median of ${ROUNDS}, spread ${spread2(offCpu)}`);
line('history_on_cpu_ms_per_write', median(onCpu), 'ms', `median of ${ROUNDS}, spread ${spread2(onCpu)}`);
const cpuRatios = offCpu.map((v, i) => v / onCpu[i]);
line(
  'history_cpu_off_vs_on',
  median(cpuRatios),
  'ratio',
  `CPU-bound writes/s on/off; per round: ${cpuRatios.map((x) => x.toFixed(2)).join(', ')}`,
);

// Storage: 1,000 small appends spread over 20 notes, with history on.
const server = await start(true);
try {
  const c = await server.connect();
  const health0 =
    ((await server.host.health()) as { familyHealth?: Record<string, { store_bytes?: number }> }).familyHealth?.history
      ?.store_bytes ?? 0;
  for (let i = 0; i < 1000; i++)
    await c.callTool({
      name: 'edit_note',
      arguments: { path: `bench/n${i % 20}.md`, content: `\n- small edit ${i}`, append: true },
    });
  const health = (await server.host.health()) as {
    familyHealth?: Record<string, { store_bytes?: number; revisions?: number }>;
  };
  const stored = (health.familyHealth?.history?.store_bytes ?? 0) - health0;
  line(
    'history_store_bytes_per_1000_edits',
    stored / 1024,
    'KiB',
    `${health.familyHealth?.history?.revisions} revisions; whole versions, deduplicated by hash, notes ~1.3–2.5 KB`,
  );
  const lists: number[] = [];
  const diffs: number[] = [];
  for (let i = 0; i < 200; i++)
    await c.callTool({ name: 'edit_note', arguments: { path: 'bench/n0.md', content: `\n- more ${i}`, append: true } });
  const listed = await c.callTool({ name: 'list_revisions', arguments: { path: 'bench/n0.md', limit: 20 } });
  if (listed.isError) throw new Error(`list_revisions refused: ${JSON.stringify(listed.content)}`);
  const revs = (listed.structuredContent as { revisions: Array<{ revision: string }> }).revisions;
  for (let i = 0; i < 100; i++) {
    let t0 = performance.now();
    await c.callTool({ name: 'list_revisions', arguments: { path: 'bench/n0.md', limit: 20 } });
    lists.push(performance.now() - t0);
    t0 = performance.now();
    await c.callTool({
      name: 'diff_revisions',
      arguments: { path: 'bench/n0.md', from: revs[(i % (revs.length - 1)) + 1].revision },
    });
    diffs.push(performance.now() - t0);
  }
  line(
    'list_revisions_p50',
    percentile(lists, 50),
    'ms',
    `limit 20 on a note with 250+ revisions; p90 ${percentile(lists, 90).toFixed(1)} ms`,
  );
  line(
    'diff_revisions_p50',
    percentile(diffs, 50),
    'ms',
    `revision vs current, ~5–8 KB notes; p90 ${percentile(diffs, 90).toFixed(1)} ms`,
  );
} finally {
  await server.close();
}
