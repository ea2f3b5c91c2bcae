// keyword_search server time (the ranking SQL, no MCP transport) on the largest public corpus vault
// copied ×N into one temp vault, indexed by the real pipeline on embedded PGlite. Prints `name: value unit`.
// Usage: tsx bench/search.ts [copies=4 | a list, e.g. 4,40] [rounds=30] [candidates=search.keywordCandidates default]
// With a list, each size gets its own vault and the figures are suffixed with the note count, then the
// p50 growth from the smallest to the largest size is printed per query kind.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_RANKING, keywordSearch, type RankingOptions } from '../plugins/search/keyword/search.js';
import type { KeywordIndexService } from '../plugins/search/family.js';
import { KeywordMemory } from '../plugins/search/keyword/memory-index.js';
import { searchSettingsSchema } from '../plugins/search/settings.js';
import { startTestServer } from '../src/host/testing/harness.js';
import type { IndexService } from '../src/sdk/index-service.js';
import { benchCorpus } from '../test/fixtures/corpus.js';
import { percentile } from './lib/setup.js';

const CORPUS = benchCorpus('oldwinter-knowledge-garden');
const sizes = String(process.argv[2] ?? '4')
  .split(',')
  .map(Number);
const rounds = Number(process.argv[3] ?? 30);
const candidates = Number(process.argv[4] ?? searchSettingsSchema.properties.keywordCandidates.default);
const QUERIES: Record<string, string> = {
  title: 'Kubernetes',
  rare: 'terraform',
  two_term: 'docker network',
  broad_or: 'the OR note OR use OR 的',
  // Question-shaped: what agents send. The long one has 11 content words, most matching only in part.
  question: 'What do my notes say about Redis caching?',
  question_long:
    'how do I set up a kubernetes cluster with docker images, persistent storage volumes and an ingress controller',
  question_zh: '如何保持健康的生活习惯？',
  cjk_substring: '保持健康',
};

// BENCH_RANKINGS='{"name":{search.ranking…}}' times those rankings beside the defaults (figures suffixed _name).
const variants: Array<[string, RankingOptions]> = [
  ['', DEFAULT_RANKING],
  ...Object.entries(JSON.parse(process.env.BENCH_RANKINGS ?? '{}') as Record<string, Partial<RankingOptions>>).map(
    ([label, r]): [string, RankingOptions] => [`_${label}`, { ...DEFAULT_RANKING, ...r }],
  ),
];
const p50s = new Map<string, Array<{ notes: number; p50: number }>>();
console.log(`machine: ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}, pglite embedded`);
for (const copies of sizes) {
  const suffix = sizes.length > 1 ? `_x${copies}` : '';
  const staging = mkdtempSync(path.join(os.tmpdir(), 'exo-bench-search-'));
  for (let i = 0; i < copies; i++) cpSync(CORPUS, path.join(staging, `copy${i}`), { recursive: true });
  const t0 = Date.now();
  const server = await startTestServer({
    copyVaultFrom: staging,
    config: {
      families: {
        files: { enabled: false },
        graph: { enabled: false },
        tasks: { enabled: false },
        notes: { enabled: false },
      },
      search: { ftsConfigs: ['english', 'simple'] },
    },
  });
  try {
    const vaultId = server.host.vaultHandle.id;
    const index = server.host.services.named.get('index') as IndexService;
    await index.whenReady(vaultId, 3_600_000);
    const status = index.status(vaultId);
    console.log(`search_bench_notes${suffix}: ${status.indexed} notes`);
    console.log(`search_bench_candidates${suffix}: ${candidates}`);
    console.log(`search_bench_index_time${suffix}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const db = server.host.database.db;
    // BENCH_SQL=1 ranks in SQL only (the memory index off), for the before/after in one session.
    // The server's own memory index when search.keywordMemory is on, else one made here over the same database.
    const memory =
      process.env.BENCH_SQL === '1'
        ? undefined
        : ((server.host.manager.registry.providedService('search-keyword') as KeywordIndexService | undefined)
            ?.memory ?? new KeywordMemory(db));
    if (memory) {
      const m0 = process.memoryUsage().rss;
      const l0 = Date.now();
      await memory.ensure(vaultId);
      const v = memory.indexes.get(vaultId);
      console.log(`search_bench_memory_load${suffix}: ${((Date.now() - l0) / 1000).toFixed(1)} s`);
      console.log(
        `search_bench_memory_postings${suffix}: ${Math.round((v?.postingBytes ?? 0) / 1048576)} MiB (rss +${Math.round((process.memoryUsage().rss - m0) / 1048576)} MiB while loading)`,
      );
    }
    console.log(`search_bench_path${suffix}: ${memory ? 'memory' : 'sql'}`);
    const options = {
      configs: ['english', 'simple'],
      limit: 20,
      candidates,
      rescore: searchSettingsSchema.properties.keywordRescore.default,
      snippetRows: 10,
      snippetChars: 240,
      snippetScanChars: 20_000,
      fill: true,
      memory,
    };
    for (const [name, q] of Object.entries(QUERIES)) {
      // Each ranking's rounds interleave with the others', so a loaded machine slows them alike.
      const times = variants.map(() => [] as number[]);
      const rows = variants.map(() => 0);
      for (const [, ranking] of variants) await keywordSearch(db, vaultId, q, {}, { ...options, ranking }); // warm
      for (let i = 0; i < rounds; i++) {
        for (const [v, [, ranking]] of variants.entries()) {
          const s = process.hrtime.bigint();
          const r = await keywordSearch(db, vaultId, q, {}, { ...options, ranking });
          times[v].push(Number(process.hrtime.bigint() - s) / 1e6);
          rows[v] = r.hits.length;
        }
      }
      for (const [v, [label]] of variants.entries()) {
        const key = `${name}${label}`;
        const p50 = percentile(times[v], 50);
        console.log(`keyword_${key}_p50${suffix}: ${p50.toFixed(1)} ms`);
        console.log(`keyword_${key}_p95${suffix}: ${percentile(times[v], 95).toFixed(1)} ms`);
        console.log(`keyword_${key}_rows${suffix}: ${rows[v]} rows`);
        p50s.set(key, [...(p50s.get(key) ?? []), { notes: status.indexed, p50 }]);
      }
    }
    console.log(`rss${suffix}: ${Math.round(process.memoryUsage().rss / 1048576)} MiB`);
  } finally {
    await server.close();
    rmSync(staging, { recursive: true, force: true });
  }
}
if (sizes.length > 1) {
  for (const [name, list] of p50s) {
    const first = list[0];
    const last = list[list.length - 1];
    console.log(
      `keyword_${name}_p50_growth: ${(last.p50 / first.p50).toFixed(2)} x (${first.notes} → ${last.notes} notes)`,
    );
  }
}
