// Index freshness: an external edit (node:fs append, as an editor or sync client would) → the new hash
// visible in the notes table, via the watcher. p50/p95/max over 100 sequential edits, embedded PGlite.
// Prints `name: value unit` lines. Usage: tsx bench/index-fresh.ts [vaultDir] (copied to a temp dir first)
import { createHash } from 'node:crypto';
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from '../src/host/db/index.js';
import { IndexPipeline } from '../src/host/index/index.js';
import { pgliteTemplate } from '../src/host/testing/harness.js';
import { openVault } from '../src/host/vault/index.js';
import { PiscinaPool } from '../src/host/workers/pool.js';
import type { Logger } from '../src/sdk/types.js';
import { benchCorpus } from '../test/fixtures/corpus.js';

const source = process.argv[2] ?? benchCorpus('obsidian-tasks-demo');
const EDITS = Number(process.env.BENCH_EDITS ?? 100);
const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };

const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-bench-fresh-'));
const vault = path.join(dir, 'vault');
cpSync(source, vault, { recursive: true });
cpSync(await pgliteTemplate(), path.join(dir, 'db'), { recursive: true });
const database = await openDatabase(`pglite:${path.join(dir, 'db')}`, { baseDir: '/' });
const vaultId = Number(
  (
    await sql<{ id: number }>`INSERT INTO vaults (name, root) VALUES ('bench', ${vault}) RETURNING id`.execute(
      database.db,
    )
  ).rows[0].id,
);
const fs = await openVault(vault, { allowNamedStaging: true });
const workers = new PiscinaPool({ threads: 0, idleTimeoutMs: 60_000 });
const settings = {
  watch: true,
  debounceMs: 100,
  reconcileSeconds: 0,
  maxNoteBytes: 5 * 1024 * 1024,
  batchSize: 50,
  parseTaskSize: 25,
  prefetchBatches: 2,
  readConcurrency: 16,
  inlineParseMaxBytes: 64 * 1024,
  groupCommitWaitMs: 10,
  deferredWrites: true,
  deferredDelayMs: 200,
};
const pipeline = new IndexPipeline({
  db: database.db,
  vault: { id: vaultId, name: 'bench', obsidianName: null, fs },
  workers,
  log: silent,
  settings,
  contributors: () => [],
});
pipeline.start();
await pipeline.whenReady(vaultId, 600_000);
const paths = [...pipeline.cache.keys()].sort();

const latencies: number[] = [];
let timeouts = 0;
for (let i = 0; i < EDITS; i++) {
  const rel = paths[(i * 7) % paths.length];
  const abs = path.join(vault, rel);
  const t0 = performance.now();
  appendFileSync(abs, `\nedit ${i} at ${Date.now()}\n`);
  const expected = 'sha256:' + createHash('sha256').update(readFileSync(abs)).digest('hex');
  for (;;) {
    const row = await database.db
      .selectFrom('notes')
      .select('content_hash')
      .where('vault_id', '=', vaultId)
      .where('path', '=', rel)
      .executeTakeFirst();
    if (row?.content_hash === expected) break;
    if (performance.now() - t0 > 10_000) {
      timeouts++;
      break;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  latencies.push(performance.now() - t0);
  await new Promise((r) => setTimeout(r, 20));
}
latencies.sort((a, b) => a - b);
const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
console.log(
  `machine: ${os.cpus()[0]?.model ?? 'unknown'} x${os.cpus().length}, node ${process.version}, engine: pglite (embedded), watcher debounce ${settings.debounceMs} ms`,
);
console.log(`data: ${source} (${paths.length} notes)`);
console.log(`index_fresh_edits: ${EDITS} edits`);
console.log(`index_fresh_p50: ${q(0.5).toFixed(0)} ms`);
console.log(`index_fresh_p95: ${q(0.95).toFixed(0)} ms`);
console.log(`index_fresh_max: ${latencies[latencies.length - 1].toFixed(0)} ms`);
console.log(`index_fresh_timeouts: ${timeouts} edits`);
await pipeline.close();
await workers.close();
await fs.close();
await database.close();
rmSync(dir, { recursive: true, force: true });
