// Cold index throughput: notes/s from an empty notes table to "ready" for each public corpus vault and
// for the largest one copied ×4, no contributors, on embedded PGlite or (BENCH_ENGINE=postgres) a
// throwaway native PostgreSQL. Prints `name: value unit` lines.
// Usage: tsx bench/index-cold.ts [corpusRoot]   (copies each vault to a temp dir; never touches the corpus)
// Env: BENCH_ENGINE (pglite | postgres), BENCH_PGLITE_THREAD (1: PGlite on its own thread, the default; 0: on this one)
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { migrateHost, openDatabase } from '../src/host/db/index.js';
import { startPostgres } from '../src/host/testing/postgres-server.js';
import { IndexPipeline, type IndexSettings } from '../src/host/index/index.js';
import { pgliteTemplate } from '../src/host/testing/harness.js';
import { openVault } from '../src/host/vault/index.js';
import { PiscinaPool } from '../src/host/workers/pool.js';
import type { Logger } from '../src/sdk/types.js';
import { benchCorpora } from '../test/fixtures/corpus.js';

const root = process.argv[2] ?? benchCorpora().root;
const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const settings: IndexSettings = {
  watch: false,
  debounceMs: 100,
  reconcileSeconds: 0,
  maxNoteBytes: 5 * 1024 * 1024,
  batchSize: Number(process.env.BENCH_BATCH ?? 50),
  parseTaskSize: Number(process.env.BENCH_TASK ?? 25),
  prefetchBatches: Number(process.env.BENCH_PREFETCH ?? 2),
  readConcurrency: 16,
  inlineParseMaxBytes: 64 * 1024,
  groupCommitWaitMs: 10,
  deferredWrites: true,
  deferredDelayMs: 200,
};

const ENGINE = process.env.BENCH_ENGINE === 'postgres' ? 'postgres' : 'pglite';
const stops: Array<() => void> = [];
let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);

async function coldIndex(name: string, sources: string[]): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-bench-index-'));
  try {
    const vault = path.join(dir, 'vault');
    if (sources.length === 1) cpSync(sources[0], vault, { recursive: true });
    else sources.forEach((s, i) => cpSync(s, path.join(vault, `copy-${i + 1}`), { recursive: true }));
    let database;
    let pg: { url: string; stop(): void } | undefined;
    if (ENGINE === 'postgres') {
      pg = await startPostgres();
      database = await openDatabase(pg.url, { baseDir: '/', poolSize: 4 });
      await migrateHost(database.db);
    } else {
      cpSync(await pgliteTemplate(), path.join(dir, 'db'), { recursive: true });
      database = await openDatabase(`pglite:${path.join(dir, 'db')}`, {
        baseDir: '/',
        pgliteThread: process.env.BENCH_PGLITE_THREAD !== '0',
      });
    }
    stops.push(() => pg?.stop());
    const vaultId = Number(
      (
        await sql<{ id: number }>`INSERT INTO vaults (name, root) VALUES ('bench', ${vault}) RETURNING id`.execute(
          database.db,
        )
      ).rows[0].id,
    );
    const fs = await openVault(vault, { allowNamedStaging: true });
    const workers = new PiscinaPool({ threads: Number(process.env.BENCH_THREADS ?? 0), idleTimeoutMs: 60_000 }); // 0 = the server's default
    const pipeline = new IndexPipeline({
      db: database.db,
      vault: { id: vaultId, name: 'bench', obsidianName: null, fs },
      workers,
      log: silent,
      settings,
      contributors: () => [],
    });
    peakRss = process.memoryUsage().rss;
    const t0 = performance.now();
    pipeline.start();
    await pipeline.whenReady(vaultId, 600_000);
    const secs = (performance.now() - t0) / 1000;
    const st = pipeline.status();
    const mb = sources.reduce((n, s) => n + bytesUnder(s), 0) / 1e6;
    console.log(`index_cold_${name}_notes: ${st.indexed + st.quarantined} notes`);
    console.log(`index_cold_${name}_seconds: ${secs.toFixed(2)} s`);
    console.log(`index_cold_${name}_notes_per_s: ${((st.indexed + st.quarantined) / secs).toFixed(0)} notes/s`);
    console.log(`index_cold_${name}_mb_per_s: ${(mb / secs).toFixed(2)} MB/s`);
    console.log(`index_cold_${name}_peak_rss: ${(peakRss / 1024 / 1024).toFixed(0)} MiB`);
    await pipeline.close();
    await workers.close();
    await fs.close();
    await database.close();
  } finally {
    for (const stop of stops.splice(0)) stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function bytesUnder(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith('.')) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) n += bytesUnder(p);
    else if (e.isFile() && e.name.endsWith('.md')) n += statSync(p).size;
  }
  return n;
}

console.log(
  `machine: ${os.cpus()[0]?.model ?? 'unknown'} x${os.cpus().length}, node ${process.version}, engine: ${ENGINE === 'postgres' ? 'native PostgreSQL 15 (loopback)' : 'pglite (embedded)'}`,
);
console.log(`data: ${root}`);
const vaults = readdirSync(root).filter((d) => d !== 'LICENSES' && statSync(path.join(root, d)).isDirectory());
const only = process.env.BENCH_ONLY;
for (const v of vaults) if (!only || v === only) await coldIndex(v, [path.join(root, v)]);
const largest = vaults.map((v) => ({ v, n: bytesUnder(path.join(root, v)) })).sort((a, b) => b.n - a.n)[0].v;
if (!only || only === 'x4')
  await coldIndex(
    `${largest}_x4`,
    [0, 1, 2, 3].map(() => path.join(root, largest)),
  );
clearInterval(sampler);
