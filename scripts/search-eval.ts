// Search evaluation: recall@5, recall@10, recall@50 and MRR@10 per split (tune/test), language and query style
// for keyword, semantic and hybrid search through the real host and MCP client on a temp copy of the judged corpora, beside a plain
// Okapi BM25 baseline computed here over the same files and, with --peer, mcpvault's search_notes over its
// stdio MCP interface (installed into a temp dir, never a dependency). Semantic uses the deterministic test
// embedding server on loopback unless a provider is given. Never writes the corpora.
// The judged set's split was drawn once, by vault at random: choose constants with `--split tune`, quote `test`.
// Usage: node --import tsx scripts/search-eval.ts [--judgments FILE.jsonl] [--split tune,test] [--corpora DIR] [--extra a,b]
//   [--methods keyword,semantic,hybrid] [--peer] [--fts english,simple] [--dims 256]
//   [--provider ollama|openai --base-url URL --model M --dimensions N] [--json] [--misses] [--ranks]
//   [--ranking JSON] (search.ranking settings for the run, e.g. '{"b":0.75}')
//   [--variants JSON] (more keyword rankers ranked in-process on the same index, one method `kw:NAME` each, for
//   sweeps without re-indexing: '[{"name":"b75","ranking":{"b":0.75}}]')
//   (API key for a real provider: EXO_EVAL_API_KEY)
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { EmbeddingsService } from '../plugins/search/embeddings/types.js';
import type { KeywordIndexService } from '../plugins/search/family.js';
import { DEFAULT_RANKING, keywordSearch, type RankingOptions } from '../plugins/search/keyword/search.js';
import { searchSettingsSchema } from '../plugins/search/settings.js';
import { startTestServer } from '../src/host/testing/harness.js';
import type { IndexService } from '../src/sdk/index-service.js';
import { startEmbeddingServer, type FakeEmbeddingServer } from '../test/integration/search/embedding-server.js';
import { benchCorpora } from '../test/fixtures/corpus.js';

/** One judged query: `split` (tune or test) was drawn once, by vault at random; constants are chosen on `tune`. */
interface Judgment {
  split: 'tune' | 'test';
  vault: string;
  lang: 'en' | 'zh';
  style: string;
  query: string;
  relevant: string[];
}
/** Styles that are not questions: the query is the note's title or a phrase copied from it. */
const LOOKUP_STYLES = new Set(['title', 'phrase']);

type ServerMethod = 'keyword' | 'semantic' | 'hybrid';
type Method = string;
const DEPTH = 50;
/** The peer's own cap on search_notes' limit. */
const PEER_LIMIT = 20;
const PEER = '@bitbonsai/mcpvault@0.16.0';

const { values: args } = parseArgs({
  options: {
    judgments: {
      type: 'string',
      default: path.resolve(import.meta.dirname, '../test/fixtures/search/judgments.jsonl'),
    },
    methods: { type: 'string', default: 'keyword,semantic,hybrid' },
    peer: { type: 'boolean', default: false },
    corpora: { type: 'string', default: benchCorpora().root },
    extra: { type: 'string', default: 'obsidian-tasks-demo' },
    fts: { type: 'string', default: 'english' },
    dims: { type: 'string', default: '256' },
    provider: { type: 'string' },
    'base-url': { type: 'string' },
    model: { type: 'string' },
    dimensions: { type: 'string' },
    json: { type: 'boolean', default: false },
    split: { type: 'string', default: 'tune,test' },
    misses: { type: 'boolean', default: false },
    ranks: { type: 'boolean', default: false },
    ranking: { type: 'string' },
    variants: { type: 'string' },
  },
});
const serverMethods = args.methods.split(',').filter(Boolean) as ServerMethod[];
const variants = (args.variants ? JSON.parse(args.variants) : []) as Array<{
  name: string;
  ranking: Partial<RankingOptions>;
}>;
const METHODS: Method[] = [
  ...serverMethods,
  ...variants.map((v) => `kw:${v.name}`),
  'bm25',
  ...(args.peer ? ['peer'] : []),
];

const SPLITS = args.split.split(',').filter(Boolean);
const judgments: Judgment[] = readFileSync(args.judgments, 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l, i) => {
    const j = JSON.parse(l) as Judgment;
    if (!j.style || !j.query || !j.lang || !j.split || !Array.isArray(j.relevant) || !j.relevant.length)
      throw new Error(`line ${i + 1}: needs split, lang, style, query and relevant[]`);
    return j;
  })
  .filter((j) => SPLITS.includes(j.split));

// The vault: every corpus a judgment names (first path segment) plus the distractor corpora.
const corpusNames = [
  ...new Set([
    ...judgments.flatMap((j) => j.relevant.map((p) => p.split('/')[0])),
    ...(args.extra ? args.extra.split(',').filter(Boolean) : []),
  ]),
];
const staging = mkdtempSync(path.join(os.tmpdir(), 'exo-search-eval-'));
for (const name of corpusNames) {
  const from = path.join(args.corpora, name);
  if (!existsSync(from)) throw new Error(`corpus ${name} not found under ${args.corpora}`);
  cpSync(from, path.join(staging, name), { recursive: true });
}
for (const j of judgments)
  for (const p of j.relevant)
    if (!existsSync(path.join(staging, p))) throw new Error(`judged path not in the corpora: ${p}`);

const needsSemantic = serverMethods.some((m) => m !== 'keyword');
let fake: FakeEmbeddingServer | undefined;
let embedding: Record<string, unknown> = { provider: 'none' };
let semanticSource = 'not run';
if (needsSemantic && args.provider) {
  embedding = {
    provider: args.provider,
    ...(args['base-url'] ? { baseUrl: args['base-url'] } : {}),
    ...(args.model ? { model: args.model } : {}),
    ...(args.dimensions ? { dimensions: Number(args.dimensions) } : {}),
    ...(process.env.EXO_EVAL_API_KEY ? { apiKey: process.env.EXO_EVAL_API_KEY } : {}),
    pollMs: 50,
  };
  semanticSource = `provider ${args.provider}${args.model ? ` model ${args.model}` : ''}`;
} else if (needsSemantic) {
  const dims = Number(args.dims);
  fake = await startEmbeddingServer(dims);
  embedding = {
    provider: 'openai',
    baseUrl: `${fake.url}/v1`,
    model: `hash-${dims}`,
    dimensions: dims,
    pollMs: 20,
    batchSize: 64,
    notesPerPass: 64,
    retries: 0,
  };
  semanticSource = `deterministic hashed bag-of-words test embeddings (${dims} dims, loopback test server) — a lexical stand-in, not a semantic model`;
}

// ---- The plain BM25 baseline: what a user gets from a 60-line script over the same files. ----
const BM25_STOP = new Set(
  'a an and are as at be but by do does did for from has have how i in is it its me my of on or our so that the their them then there these they this to was we were what when where which who why will with would you your can could should about'.split(
    ' ',
  ),
);
const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;
function bm25Tokens(text: string): string[] {
  const out: string[] = [];
  for (const run of text.match(CJK_RUN) ?? []) {
    if (run.length === 1) out.push(run);
    for (let i = 0; i + 1 < run.length; i++) out.push(run.slice(i, i + 2));
  }
  for (const w of text
    .replace(CJK_RUN, ' ')
    .toLowerCase()
    .split(/[^\p{L}\p{N}_]+/u)) {
    if (!w || BM25_STOP.has(w)) continue;
    out.push(w.length > 4 ? w.replace(/(ing|edly|ed|ies|es|s|ly)$/, '') : w);
  }
  return out;
}
function bm25Baseline(root: string): (query: string) => string[] {
  const docs: Array<{ path: string; tf: Map<string, number>; len: number }> = [];
  const df = new Map<string, number>();
  const walk = (rel: string) => {
    for (const e of readdirSync(path.join(root, rel), { withFileTypes: true })) {
      if (e.name.startsWith('.')) continue;
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.md')) {
        const text = readFileSync(path.join(root, p), 'utf8').replace(/^---\n[\s\S]*?\n---\n/, '');
        const tokens = bm25Tokens(`${path.basename(p, '.md')}\n${text}`);
        const tf = new Map<string, number>();
        for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
        for (const t of tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
        docs.push({ path: p, tf, len: tokens.length });
      }
    }
  };
  walk('');
  const avg = docs.reduce((a, d) => a + d.len, 0) / Math.max(1, docs.length);
  return (query) => {
    const terms = [...new Set(bm25Tokens(query))];
    const scored: Array<{ path: string; s: number }> = [];
    for (const d of docs) {
      let s = 0;
      for (const t of terms) {
        const f = d.tf.get(t);
        if (!f) continue;
        const n = df.get(t) ?? 0;
        s +=
          Math.log(1 + (docs.length - n + 0.5) / (n + 0.5)) * ((f * 2.2) / (f + 1.2 * (0.25 + (0.75 * d.len) / avg)));
      }
      if (s > 0) scored.push({ path: d.path, s });
    }
    return scored
      .sort((a, b) => b.s - a.s || a.path.localeCompare(b.path))
      .slice(0, DEPTH)
      .map((x) => x.path);
  };
}

// ---- The peer: mcpvault's search_notes through its own stdio MCP server. ----
async function startPeer(root: string): Promise<{ search(query: string): Promise<string[]>; close(): Promise<void> }> {
  const dir = path.join(os.tmpdir(), 'exo-eval-peer-mcpvault-0.16.0');
  if (!existsSync(path.join(dir, '.installed'))) {
    mkdirSync(dir, { recursive: true });
    execFileSync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', PEER], {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 300_000,
    });
    writeFileSync(path.join(dir, '.installed'), `${PEER}\n`);
  }
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(dir, 'node_modules/@bitbonsai/mcpvault/dist/server.js'), root, '--read-only'],
    stderr: 'ignore',
  });
  const client = new Client({ name: 'exo-search-eval', version: '0.0.0' });
  await client.connect(transport);
  return {
    async search(query) {
      const r = (await client.callTool({ name: 'search_notes', arguments: { query, limit: PEER_LIMIT } })) as {
        content?: Array<{ text?: string }>;
      };
      const text = (r.content ?? []).map((c) => c.text ?? '').join('');
      try {
        const rows = JSON.parse(text) as Array<{ p: string }> | { results?: Array<{ p: string }> };
        return (Array.isArray(rows) ? rows : (rows.results ?? [])).map((x) => x.p);
      } catch {
        return [];
      }
    },
    close: () => client.close(),
  };
}

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
    search: {
      ftsConfigs: args.fts.split(','),
      embedding,
      ...(args.ranking ? { ranking: JSON.parse(args.ranking) } : {}),
    },
  },
});
let peer: Awaited<ReturnType<typeof startPeer>> | undefined;
try {
  const vaultId = server.host.vaultHandle.id;
  const index = server.host.services.named.get('index') as IndexService;
  if (!(await index.whenReady(vaultId, 1_800_000))) throw new Error('the index did not finish its scan');
  const notes = index.status(vaultId).indexed;
  // Every query ranks on one path: the in-memory scoring index, loaded before the first (SQL answers while it loads).
  const memory = (server.host.manager.registry.providedService('search-keyword') as KeywordIndexService | undefined)
    ?.memory;
  await memory?.ensure(vaultId);
  if (needsSemantic) {
    const svc = server.host.manager.registry.providedService('embeddings') as EmbeddingsService;
    for (;;) {
      const c = await svc.counts(vaultId);
      if (c.queued === 0 && c.embedded > 0) break;
      if (c.failing > 0 && c.lastError) throw new Error(`embedding failed: ${c.lastError}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const prepSeconds = (Date.now() - t0) / 1000;
  const bm25 = bm25Baseline(staging);
  if (args.peer) peer = await startPeer(staging);
  const client = await server.connect();
  const runs: Array<{ j: Judgment; ranked: Record<Method, string[]>; notes: Record<Method, string> }> = [];
  for (const j of judgments) {
    const ranked = {} as Record<Method, string[]>;
    const notesOf = {} as Record<Method, string>;
    for (const m of serverMethods) {
      const r = (await client.callTool({ name: `${m}_search`, arguments: { query: j.query, limit: DEPTH } })) as {
        structuredContent?: { rows?: Array<{ path: string }>; semantic?: string; arms?: string };
      };
      ranked[m] = (r.structuredContent?.rows ?? []).map((x) => x.path);
      notesOf[m] = r.structuredContent?.semantic ?? r.structuredContent?.arms ?? '';
    }
    const base = args.ranking ? JSON.parse(args.ranking) : {};
    const d = searchSettingsSchema.properties;
    for (const v of variants) {
      const r = await keywordSearch(
        server.host.database.db,
        vaultId,
        j.query,
        {},
        {
          configs: args.fts.split(','),
          limit: DEPTH,
          candidates: d.keywordCandidates.default,
          rescore: d.keywordRescore.default,
          snippetRows: d.snippetRows.default,
          snippetChars: d.snippetChars.default,
          snippetScanChars: d.snippetScanChars.default,
          fill: true,
          ranking: { ...DEFAULT_RANKING, ...base, ...v.ranking },
          ...(memory ? { memory } : {}),
        },
      );
      ranked[`kw:${v.name}`] = r.hits.map((h) => h.path);
    }
    ranked.bm25 = bm25(j.query);
    if (peer) ranked.peer = await peer.search(j.query);
    runs.push({ j, ranked, notes: notesOf });
  }
  const degraded = runs.filter(
    (r) => (r.notes.semantic ?? '').startsWith('unavailable') || (r.notes.hybrid ?? '').startsWith('keyword-only'),
  );
  // Rows per split, language and style, plus `questions` (every style but titles and phrases) and `all`.
  const styles = [...new Set(judgments.map((j) => j.style))];
  const groups: Array<{ split: string; lang: string; style: string; of: (j: Judgment) => boolean }> = [];
  for (const split of SPLITS)
    for (const lang of ['en', 'zh'])
      for (const style of [...styles, 'questions', 'all'])
        groups.push({
          split,
          lang,
          style,
          of: (j) =>
            j.split === split &&
            j.lang === lang &&
            (style === 'all' || (style === 'questions' ? !LOOKUP_STYLES.has(j.style) : j.style === style)),
        });
  const rows: Array<{
    method: Method;
    split: string;
    lang: string;
    style: string;
    n: number;
    recall5: number;
    recall10: number;
    recall50: number;
    mrr10: number;
    top10: number;
  }> = [];
  for (const m of METHODS) {
    for (const g of groups) {
      const subset = runs.filter((r) => g.of(r.j));
      if (!subset.length) continue;
      let r5 = 0;
      let r10 = 0;
      let r50 = 0;
      let rr = 0;
      let top10 = 0;
      for (const { j, ranked } of subset) {
        const list = ranked[m];
        const rel = new Set(j.relevant);
        r5 += list.slice(0, 5).filter((p) => rel.has(p)).length / rel.size;
        r10 += list.slice(0, 10).filter((p) => rel.has(p)).length / rel.size;
        r50 += list.slice(0, 50).filter((p) => rel.has(p)).length / rel.size;
        const first = list.findIndex((p) => rel.has(p));
        if (first >= 0 && first < 10) {
          rr += 1 / (first + 1);
          top10 += 1;
        }
      }
      const n = subset.length;
      rows.push({
        method: m,
        split: g.split,
        lang: g.lang,
        style: g.style,
        n,
        recall5: r5 / n,
        recall10: r10 / n,
        recall50: r50 / n,
        mrr10: rr / n,
        top10,
      });
    }
  }
  if (args.json) {
    console.log(
      JSON.stringify(
        {
          queries: judgments.length,
          notes,
          corpora: corpusNames,
          semantic: semanticSource,
          peer: args.peer ? PEER : null,
          degraded: degraded.length,
          rows,
        },
        null,
        2,
      ),
    );
  } else {
    const counts = SPLITS.map(
      (split) =>
        `${split}: ${['en', 'zh'].map((lang) => `${lang} ${judgments.filter((j) => j.split === split && j.lang === lang).length}`).join(' ')}`,
    ).join(', ');
    console.log(
      `search-eval: ${judgments.length} queries (${counts}) · vault ${notes} notes from ${corpusNames.join(', ')} · ftsConfigs ${args.fts} · prepared in ${prepSeconds.toFixed(1)} s`,
    );
    if (needsSemantic) console.log(`semantic arm: ${semanticSource}`);
    console.log(
      `bm25: plain Okapi BM25 over the files (k1 1.2, b 0.75, title + body, crude suffix stemming, CJK bigrams)${args.peer ? ` · peer: ${PEER} search_notes (its limit caps at ${PEER_LIMIT})` : ''}`,
    );
    if (degraded.length)
      console.log(
        `WARNING: the semantic arm was unavailable for ${degraded.length} queries (${degraded[0].notes.semantic || degraded[0].notes.hybrid})`,
      );
    console.log(
      `${'method'.padEnd(9)}${'split'.padEnd(6)}${'lang'.padEnd(5)}${'style'.padEnd(12)}${'n'.padStart(4)}${'top10'.padStart(7)}${'R@5'.padStart(8)}${'R@10'.padStart(8)}${'R@50'.padStart(8)}${'MRR@10'.padStart(8)}`,
    );
    for (const r of rows) {
      console.log(
        `${r.method.padEnd(9)}${r.split.padEnd(6)}${r.lang.padEnd(5)}${r.style.padEnd(12)}${String(r.n).padStart(4)}${String(r.top10).padStart(7)}${r.recall5.toFixed(3).padStart(8)}${r.recall10.toFixed(3).padStart(8)}${r.recall50.toFixed(3).padStart(8)}${r.mrr10.toFixed(3).padStart(8)}`,
      );
    }
    if (args.ranks) {
      console.log(`ranks (first answer, 0 = not in ${DEPTH}): ${METHODS.join(' ')}`);
      for (const { j, ranked } of runs)
        console.log(
          `rank ${j.split} ${j.lang} ${j.style.padEnd(11)} ${METHODS.map((m) => String(ranked[m].findIndex((p) => j.relevant.includes(p)) + 1).padStart(3)).join('')}  ${JSON.stringify(j.query)}`,
        );
    }
    if (args.misses) {
      for (const { j, ranked } of runs) {
        for (const m of METHODS) {
          const first = ranked[m].findIndex((p) => j.relevant.includes(p));
          if (first < 0 || first >= 10)
            console.log(
              `miss@10 ${m.padEnd(8)} ${j.split} ${j.lang} ${j.style.padEnd(11)} ${JSON.stringify(j.query)} → ${first < 0 ? `not in top ${ranked[m].length}` : `rank ${first + 1}`}`,
            );
        }
      }
    }
  }
} finally {
  await peer?.close();
  await server.close();
  await fake?.close();
  rmSync(staging, { recursive: true, force: true });
}
