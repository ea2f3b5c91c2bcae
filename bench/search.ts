// keyword_search server time (the ranking SQL, no MCP transport) on the largest public corpus vault
// copied ×N into one temp vault, indexed by the real pipeline on embedded PGlite. Prints `name: value unit`.
// Usage: tsx bench/search.ts [copies=4] [rounds=30] [candidates=search.keywordCandidates default]
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { keywordSearch } from '../plugins/search/keyword/search.js';
import { searchSettingsSchema } from '../plugins/search/settings.js';
import { startTestServer } from '../src/host/testing/harness.js';
import type { IndexService } from '../src/sdk/index-service.js';
import { benchCorpus } from '../test/fixtures/corpus.js';

const CORPUS = benchCorpus('oldwinter-knowledge-garden');
const copies = Number(process.argv[2] ?? 4);
const rounds = Number(process.argv[3] ?? 30);
const candidates = Number(process.argv[4] ?? searchSettingsSchema.properties.keywordCandidates.default);
const QUERIES: Record<string, string> = {
  title: 'Kubernetes',
  rare: 'terraform',
  two_term: 'docker network',
  broad_or: 'the OR note OR use OR 的',
};

const staging = mkdtempSync(path.join(os.tmpdir(), 'exo-bench-search-'));
for (let i = 0; i < copies; i++) cpSync(CORPUS, path.join(staging, `copy${i}`), { recursive: true });
const t0 = Date.now();
const server = await startTestServer({
  copyVaultFrom: staging,
  config: { families: { files: { enabled: false }, graph: { enabled: false }, tasks: { enabled: false }, notes: { enabled: false } }, search: { ftsConfigs: ['english', 'simple'] } },
});
try {
  const vaultId = server.host.vaultHandle.id;
  const index = server.host.services.named.get('index') as IndexService;
  await index.whenReady(vaultId, 1_800_000);
  const status = index.status(vaultId);
  console.log(`machine: ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}, pglite embedded`);
  console.log(`search_bench_notes: ${status.indexed} notes`);
  console.log(`search_bench_candidates: ${candidates}`);
  console.log(`search_bench_index_time: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const db = server.host.database.db;
  const options = { configs: ['english', 'simple'], limit: 20, candidates, snippetRows: 10, snippetChars: 240, snippetScanChars: 20_000, fill: true };
  for (const [name, q] of Object.entries(QUERIES)) {
    await keywordSearch(db, vaultId, q, {}, options); // warm
    const times: number[] = [];
    let rows = 0;
    for (let i = 0; i < rounds; i++) {
      const s = process.hrtime.bigint();
      const r = await keywordSearch(db, vaultId, q, {}, options);
      times.push(Number(process.hrtime.bigint() - s) / 1e6);
      rows = r.hits.length;
    }
    times.sort((a, b) => a - b);
    const pct = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))];
    console.log(`keyword_${name}_p50: ${pct(0.5).toFixed(1)} ms`);
    console.log(`keyword_${name}_p95: ${pct(0.95).toFixed(1)} ms`);
    console.log(`keyword_${name}_rows: ${rows} rows`);
  }
  console.log(`rss: ${Math.round(process.memoryUsage().rss / 1048576)} MiB`);
} finally {
  await server.close();
  rmSync(staging, { recursive: true, force: true });
}
