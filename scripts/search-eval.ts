// Search evaluation: recall@10, recall@50 and MRR per query kind for keyword, semantic and hybrid search,
// through the real host and MCP client on a temp copy of the judged corpora. Semantic uses the
// deterministic test embedding server on loopback unless a provider is given. Never writes the corpora.
// Usage: node --import tsx scripts/search-eval.ts --judgments FILE.jsonl [--corpora DIR] [--extra a,b]
//   [--fts english,simple] [--dims 256] [--provider ollama|openai --base-url URL --model M --dimensions N]
//   [--json] [--misses]   (API key for a real provider: EXO_EVAL_API_KEY)
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { EmbeddingsService } from '../plugins/search/embeddings/types.js';
import { startTestServer } from '../src/host/testing/harness.js';
import type { IndexService } from '../src/sdk/index-service.js';
import { startEmbeddingServer, type FakeEmbeddingServer } from '../test/integration/search/embedding-server.js';
import { benchCorpora } from '../test/fixtures/corpus.js';

interface Judgment {
  kind: string;
  query: string;
  relevant: string[];
}

type Method = 'keyword' | 'semantic' | 'hybrid';
const METHODS: Method[] = ['keyword', 'semantic', 'hybrid'];
const DEPTH = 50;

const { values: args } = parseArgs({
  options: {
    judgments: { type: 'string' },
    corpora: { type: 'string', default: benchCorpora().root },
    extra: { type: 'string', default: 'obsidian-tasks-demo' },
    fts: { type: 'string', default: 'english' },
    dims: { type: 'string', default: '256' },
    provider: { type: 'string' },
    'base-url': { type: 'string' },
    model: { type: 'string' },
    dimensions: { type: 'string' },
    json: { type: 'boolean', default: false },
    misses: { type: 'boolean', default: false },
  },
});
if (!args.judgments) {
  console.error('usage: search-eval --judgments FILE.jsonl [--corpora DIR] [--extra corpus,…] [--provider …] [--json]');
  process.exit(2);
}

const judgments: Judgment[] = readFileSync(args.judgments, 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l, i) => {
    const j = JSON.parse(l) as Judgment;
    if (!j.kind || !j.query || !Array.isArray(j.relevant) || !j.relevant.length) throw new Error(`line ${i + 1}: needs kind, query and relevant[]`);
    return j;
  });

// The vault: every corpus a judgment names (first path segment) plus the distractor corpora.
const corpusNames = [...new Set([...judgments.flatMap((j) => j.relevant.map((p) => p.split('/')[0])), ...(args.extra ? args.extra.split(',').filter(Boolean) : [])])];
const staging = mkdtempSync(path.join(os.tmpdir(), 'exo-search-eval-'));
for (const name of corpusNames) {
  const from = path.join(args.corpora, name);
  if (!existsSync(from)) throw new Error(`corpus ${name} not found under ${args.corpora}`);
  cpSync(from, path.join(staging, name), { recursive: true });
}
for (const j of judgments) for (const p of j.relevant) if (!existsSync(path.join(staging, p))) throw new Error(`judged path not in the corpora: ${p}`);

let fake: FakeEmbeddingServer | undefined;
let embedding: Record<string, unknown>;
let semanticSource: string;
if (args.provider) {
  embedding = {
    provider: args.provider,
    ...(args['base-url'] ? { baseUrl: args['base-url'] } : {}),
    ...(args.model ? { model: args.model } : {}),
    ...(args.dimensions ? { dimensions: Number(args.dimensions) } : {}),
    ...(process.env.EXO_EVAL_API_KEY ? { apiKey: process.env.EXO_EVAL_API_KEY } : {}),
    pollMs: 50,
  };
  semanticSource = `provider ${args.provider}${args.model ? ` model ${args.model}` : ''}`;
} else {
  const dims = Number(args.dims);
  fake = await startEmbeddingServer(dims);
  embedding = { provider: 'openai', baseUrl: `${fake.url}/v1`, model: `hash-${dims}`, dimensions: dims, pollMs: 20, batchSize: 64, notesPerPass: 64, retries: 0 };
  semanticSource = `deterministic hashed bag-of-words test embeddings (${dims} dims, loopback test server) — a lexical stand-in, not a semantic model`;
}

const t0 = Date.now();
const server = await startTestServer({
  copyVaultFrom: staging,
  config: {
    families: { files: { enabled: false }, graph: { enabled: false }, tasks: { enabled: false }, notes: { enabled: false } },
    search: { ftsConfigs: args.fts.split(','), embedding },
  },
});
try {
  const vaultId = server.host.vaultHandle.id;
  const index = server.host.services.named.get('index') as IndexService;
  if (!(await index.whenReady(vaultId, 1_800_000))) throw new Error('the index did not finish its scan');
  const notes = index.status(vaultId).indexed;
  const svc = server.host.manager.registry.providedService('embeddings') as EmbeddingsService;
  for (;;) {
    const c = await svc.counts(vaultId);
    if (c.queued === 0 && c.embedded > 0) break;
    if (c.failing > 0 && c.lastError) throw new Error(`embedding failed: ${c.lastError}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const prepSeconds = (Date.now() - t0) / 1000;
  const client = await server.connect();
  const runs: Array<{ j: Judgment; ranked: Record<Method, string[]>; notes: Record<Method, string> }> = [];
  for (const j of judgments) {
    const ranked = {} as Record<Method, string[]>;
    const notesOf = {} as Record<Method, string>;
    for (const m of METHODS) {
      const r = (await client.callTool({ name: `${m}_search`, arguments: { query: j.query, limit: DEPTH } })) as { structuredContent?: { rows?: Array<{ path: string }>; semantic?: string; arms?: string } };
      ranked[m] = (r.structuredContent?.rows ?? []).map((x) => x.path);
      notesOf[m] = r.structuredContent?.semantic ?? r.structuredContent?.arms ?? '';
    }
    runs.push({ j, ranked, notes: notesOf });
  }
  const degraded = runs.filter((r) => r.notes.semantic.startsWith('unavailable') || r.notes.hybrid.startsWith('keyword-only'));
  const kinds = [...new Set(judgments.map((j) => j.kind)), 'all'];
  const rows: Array<{ method: Method; kind: string; n: number; recall10: number; recall50: number; mrr: number }> = [];
  for (const m of METHODS) {
    for (const kind of kinds) {
      const subset = runs.filter((r) => kind === 'all' || r.j.kind === kind);
      let r10 = 0;
      let r50 = 0;
      let rr = 0;
      for (const { j, ranked } of subset) {
        const list = ranked[m];
        const rel = new Set(j.relevant);
        r10 += list.slice(0, 10).filter((p) => rel.has(p)).length / rel.size;
        r50 += list.slice(0, 50).filter((p) => rel.has(p)).length / rel.size;
        const first = list.findIndex((p) => rel.has(p));
        rr += first >= 0 ? 1 / (first + 1) : 0;
      }
      const n = subset.length || 1;
      rows.push({ method: m, kind, n: subset.length, recall10: r10 / n, recall50: r50 / n, mrr: rr / n });
    }
  }
  if (args.json) {
    console.log(JSON.stringify({ queries: judgments.length, notes, corpora: corpusNames, semantic: semanticSource, degraded: degraded.length, rows }, null, 2));
  } else {
    const counts = kinds.filter((k) => k !== 'all').map((k) => `${k} ${judgments.filter((j) => j.kind === k).length}`).join(', ');
    console.log(`search-eval: ${judgments.length} queries (${counts}) · vault ${notes} notes from ${corpusNames.join(', ')} · ftsConfigs ${args.fts} · prepared in ${prepSeconds.toFixed(1)} s`);
    console.log(`semantic arm: ${semanticSource}`);
    if (degraded.length) console.log(`WARNING: the semantic arm was unavailable for ${degraded.length} queries (${degraded[0].notes.semantic || degraded[0].notes.hybrid})`);
    console.log(`${'method'.padEnd(9)}${'kind'.padEnd(12)}${'n'.padStart(4)}${'R@10'.padStart(8)}${'R@50'.padStart(8)}${'MRR'.padStart(8)}`);
    for (const r of rows) {
      console.log(`${r.method.padEnd(9)}${r.kind.padEnd(12)}${String(r.n).padStart(4)}${r.recall10.toFixed(3).padStart(8)}${r.recall50.toFixed(3).padStart(8)}${r.mrr.toFixed(3).padStart(8)}`);
    }
    if (args.misses) {
      for (const { j, ranked } of runs) {
        for (const m of METHODS) {
          const first = ranked[m].findIndex((p) => j.relevant.includes(p));
          if (first < 0 || first >= 10) console.log(`miss@10 ${m.padEnd(8)} ${j.kind.padEnd(10)} ${JSON.stringify(j.query)} → ${first < 0 ? 'not in top 50' : `rank ${first + 1}`}`);
        }
      }
    }
  }
} finally {
  await server.close();
  await fake?.close();
  rmSync(staging, { recursive: true, force: true });
}
