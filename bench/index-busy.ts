// bench/index-busy: how the request path fares while a cold index runs, with embedded PGlite on its own
// worker thread (database.pgliteThread: true, the default) and on the event loop's thread (false), the
// two alternating in one run. A client calls read_note every 20 ms until the index is ready; a 5 ms timer
// measures the event loop's lag. Prints `name: value unit` lines, each the median over BENCH_RUNS rounds.
// Usage: tsx bench/index-busy.ts   Env: BENCH_COPIES (4), BENCH_RUNS (3)
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer } from '../src/host/testing/harness.js';
import type { IndexService } from '../src/sdk/index-service.js';
import { benchCorpus } from '../test/fixtures/corpus.js';
import { machine, median, percentile } from './lib/setup.js';

const COPIES = Number(process.env.BENCH_COPIES ?? 4);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const PROBE = 'copy0/AboutTheGarden.md';

interface Round {
  indexSeconds: number;
  readP50: number;
  readP95: number;
  reads: number;
  lagP50: number;
  lagP99: number;
  rssMiB: number;
}

async function round(staging: string, thread: boolean): Promise<Round> {
  const server = await startTestServer({
    copyVaultFrom: staging,
    config: {
      database: { pgliteThread: thread },
      families: { transfer: { enabled: false }, files: { enabled: false } },
    },
  });
  try {
    const index = server.host.services.named.get('index') as IndexService;
    const client = await server.connect({ name: 'probe' });
    const t0 = performance.now();
    let ready = false;
    void index.whenReady(server.host.vaultHandle.id, 3_600_000).then(() => (ready = true));
    const lags: number[] = [];
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      lags.push(Math.max(0, now - last - 5));
      last = now;
    }, 5);
    const reads: number[] = [];
    let rss = 0;
    while (!ready) {
      const s = performance.now();
      const r = (await client.callTool({ name: 'read_note', arguments: { path: PROBE } })) as { isError?: boolean };
      if (r.isError) throw new Error(`read_note ${PROBE} was refused`);
      reads.push(performance.now() - s);
      rss = Math.max(rss, process.memoryUsage.rss());
      await new Promise((r) => setTimeout(r, 20));
    }
    clearInterval(timer);
    return {
      indexSeconds: (performance.now() - t0) / 1000,
      readP50: percentile(reads, 50),
      readP95: percentile(reads, 95),
      reads: reads.length,
      lagP50: percentile(lags, 50),
      lagP99: percentile(lags, 99),
      rssMiB: rss / 2 ** 20,
    };
  } finally {
    await server.close();
  }
}

console.log(
  `# ${machine()}; oldwinter-knowledge-garden x${COPIES}; in-process server, every built-in family but files and transfer`,
);
const staging = mkdtempSync(path.join(os.tmpdir(), 'exo-bench-busy-'));
for (let i = 0; i < COPIES; i++)
  cpSync(benchCorpus('oldwinter-knowledge-garden'), path.join(staging, `copy${i}`), { recursive: true });
const results: Record<'thread' | 'inline', Round[]> = { thread: [], inline: [] };
try {
  for (let r = 0; r < RUNS; r++) {
    for (const mode of ['thread', 'inline'] as const) results[mode].push(await round(staging, mode === 'thread'));
  }
} finally {
  rmSync(staging, { recursive: true, force: true });
}
for (const mode of ['thread', 'inline'] as const) {
  const m = (f: (r: Round) => number) => median(results[mode].map(f));
  const name = `pglite_${mode}`;
  console.log(`${name}_index_cold: ${m((r) => r.indexSeconds).toFixed(1)} s`);
  console.log(
    `${name}_read_note_during_index_p50: ${m((r) => r.readP50).toFixed(1)} ms (${m((r) => r.reads).toFixed(0)} reads)`,
  );
  console.log(`${name}_read_note_during_index_p95: ${m((r) => r.readP95).toFixed(1)} ms`);
  console.log(`${name}_event_loop_lag_p50: ${m((r) => r.lagP50).toFixed(1)} ms`);
  console.log(`${name}_event_loop_lag_p99: ${m((r) => r.lagP99).toFixed(1)} ms`);
  console.log(`${name}_rss_peak: ${m((r) => r.rssMiB).toFixed(0)} MiB`);
}
const ratio = median(results.inline.map((r) => r.readP95)) / median(results.thread.map((r) => r.readP95));
console.log(`read_note_p95_inline_over_thread: ${ratio.toFixed(2)} x`);
process.exit(0);
