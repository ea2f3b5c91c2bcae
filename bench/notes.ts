// Notes-family figures through the real server and the MCP SDK client over HTTP, on copies of the largest
// public corpus vault (×BENCH_COPIES, ~10k notes at 4) with the index ready. Prints `name: value unit` lines;
// each figure is the median of BENCH_RUNS runs. Copies the corpus into a temp dir; never modifies it.
// The 8 concurrent writers run in a process of their own (bench/lib/writers.ts), as remote clients do;
// `edit_note_8_writers_distinct_in_process` repeats that phase with the clients on the server's event loop.
// Usage: tsx bench/notes.ts   Env: BENCH_COPIES (4), BENCH_RUNS (3), BENCH_READS (200 per run), BENCH_WRITES (40 per writer per run),
// BENCH_DEFERRED_DELAY_MS (index.deferredDelayMs; the setting's default when unset)
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestServer } from '../src/host/testing/harness.js';
import type { IndexService } from '../src/sdk/index-service.js';
import { writerProcess } from './lib/writers.js';
import { benchCorpus } from '../test/fixtures/corpus.js';

const CORPUS = benchCorpus('oldwinter-knowledge-garden');
const COPIES = Number(process.env.BENCH_COPIES ?? 4);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const READS = Number(process.env.BENCH_READS ?? 200);
const WRITES = Number(process.env.BENCH_WRITES ?? 40);
const WRITERS = 8;
const BACKLINKS = 200;

type Result = { isError?: boolean; content?: unknown; structuredContent?: unknown };
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};
const line = (name: string, value: number, unit: string, digits = 1, note = '') =>
  console.log(`${name}: ${value.toFixed(digits)} ${unit}${note ? ` (${note})` : ''}`);

// Staging: the corpus ×COPIES plus a hub note with BACKLINKS notes linking to it (wikilinks, alias, heading, embed, md link).
const staging = mkdtempSync(path.join(os.tmpdir(), 'exo-bench-notes-'));
for (let i = 0; i < COPIES; i++) cpSync(CORPUS, path.join(staging, `copy${i}`), { recursive: true });
mkdirSync(path.join(staging, 'bench-move/linkers'), { recursive: true });
writeFileSync(
  path.join(staging, 'bench-move/Bench Hub Target.md'),
  '# Bench hub\n\n## Details\n\nThe note every linker points at.\n',
);
const forms = [
  '[[Bench Hub Target]]',
  '[[Bench Hub Target|the hub]]',
  '[[Bench Hub Target#Details]]',
  '![[Bench Hub Target]]',
  '[hub](../Bench%20Hub%20Target.md)',
];
for (let i = 0; i < BACKLINKS; i++) {
  writeFileSync(
    path.join(staging, `bench-move/linkers/Linker ${i}.md`),
    `# Linker ${i}\n\nSee ${forms[i % forms.length]} for context, and [[Linker ${(i + 1) % BACKLINKS}]].\n`,
  );
}

console.log(`machine: ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}, pglite embedded`);
const t0 = performance.now();
const server = await startTestServer({
  copyVaultFrom: staging,
  config: {
    families: { transfer: { enabled: false }, files: { enabled: false } },
    admission: { callsPerMinute: 10_000_000, writesPerMinute: 10_000_000, concurrency: { read: 64, write: WRITERS } },
    ...(process.env.BENCH_DEFERRED_DELAY_MS
      ? { index: { deferredDelayMs: Number(process.env.BENCH_DEFERRED_DELAY_MS) } }
      : {}),
  },
});
rmSync(staging, { recursive: true, force: true });
try {
  const vaultId = server.host.vaultHandle.id;
  const index = server.host.services.named.get('index') as IndexService;
  if (!(await index.whenReady(vaultId, 3_600_000))) throw new Error('index not ready');
  const db = server.host.database.db;
  const notes = (
    await sql<{
      path: string;
      size: number;
    }>`SELECT path, size FROM notes WHERE vault_id = ${vaultId} AND path NOT LIKE 'bench-move/%' ORDER BY path`.execute(
      db,
    )
  ).rows;
  console.log(
    `data: oldwinter-knowledge-garden x${COPIES} + ${BACKLINKS + 1} hub/linker notes; families: all built-ins but files, transfer; admission concurrency.write=${WRITERS}`,
  );
  line('notes_indexed', notes.length + BACKLINKS + 1, 'notes', 0);
  line('index_ready', (performance.now() - t0) / 1000, 's');

  const clients: Client[] = [];
  for (let i = 0; i < WRITERS; i++) clients.push(await server.connect({ name: `bench-${i}` }));
  const client = clients[0];
  const writers = await writerProcess(server.url, server.key, WRITERS);
  const call = async (name: string, args: Record<string, unknown>, c = client): Promise<{ r: Result; ms: number }> => {
    const s = performance.now();
    const r = (await c.callTool({ name, arguments: args })) as Result;
    return { r, ms: performance.now() - s };
  };
  const must = async (name: string, args: Record<string, unknown>, c = client) => {
    const x = await call(name, args, c);
    if (x.r.isError)
      throw new Error(
        `${name}(${JSON.stringify(args).slice(0, 200)}) failed: ${JSON.stringify(x.r.content).slice(0, 400)}`,
      );
    return x;
  };
  const out = (r: Result) => r.structuredContent as Record<string, any>;

  /** Server-side durations (usage_logs.duration_ms) of `tool` calls recorded after `afterId`; waits for the audit flush. */
  const lastUsageId = async () =>
    Number((await sql<{ id: string | null }>`SELECT max(id) AS id FROM usage_logs`.execute(db)).rows[0].id ?? 0);
  const serverTimes = async (tool: string, afterId: number, expected: number): Promise<number[]> => {
    for (let waited = 0; ; waited += 100) {
      const rows = (
        await sql<{
          d: number;
        }>`SELECT duration_ms AS d FROM usage_logs WHERE id > ${afterId} AND tool = ${tool}`.execute(db)
      ).rows;
      if (rows.length >= expected || waited > 10_000) return rows.map((r) => Number(r.d));
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  // Deterministic sample: every k-th note of the sorted list.
  const sample = (n: number, offset: number) =>
    Array.from({ length: n }, (_, i) => notes[(offset + i * Math.floor(notes.length / n)) % notes.length].path);
  const fig: Record<string, number[]> = {};
  const add = (k: string, v: number) => (fig[k] ??= []).push(v);

  for (let run = 0; run < RUNS; run++) {
    // read_note: whole-note reads of distinct corpus notes (round trip and server time).
    const before = await lastUsageId();
    const rt: number[] = [];
    let readErrors = 0;
    for (const p of sample(READS, run * 7)) {
      const { r, ms } = await call('read_note', { path: p });
      rt.push(ms);
      if (r.isError) readErrors++;
    }
    const st = await serverTimes('read_note', before, READS);
    add('read_note_http_p50', pct(rt, 0.5));
    add('read_note_http_p95', pct(rt, 0.95));
    add('read_note_server_p50', pct(st, 0.5));
    add('read_note_server_p95', pct(st, 0.95));
    add('read_note_errors', readErrors);

    // list_notes: first page and a keyset-paged page (limit 50).
    const lt: number[] = [];
    const pt: number[] = [];
    for (let i = 0; i < 20; i++) {
      const first = await must('list_notes', { limit: 50, order_by: i % 2 ? 'path' : 'modified' });
      lt.push(first.ms);
      const cursor = out(first.r).next_cursor as string | null;
      if (cursor) pt.push((await must('list_notes', { limit: 50, order_by: i % 2 ? 'path' : 'modified', cursor })).ms);
    }
    add('list_notes_page_p50', median(lt));
    add('list_notes_next_page_p50', median(pt));

    // create_note: new notes with a few paragraphs and links.
    const ct: number[] = [];
    for (let i = 0; i < 30; i++) {
      ct.push(
        (
          await must('create_note', {
            path: `bench-new/run${run}/Note ${i}.md`,
            content: `# Note ${i}\n\nCreated by the bench. See [[Note ${(i + 1) % 30}]].\n\n- [ ] a task #bench\n`,
          })
        ).ms,
      );
    }
    add('create_note_p50', median(ct));

    // edit_note with expected_hash, one writer: append to a corpus note, chaining the returned hash.
    const target = sample(1, 101 + run)[0];
    let hash = out((await must('get_notes_info', { paths: [target] })).r).notes?.[0]?.content_hash as string;
    const et: number[] = [];
    for (let i = 0; i < 30; i++) {
      const { r, ms } = await must('edit_note', {
        path: target,
        content: `\n- bench edit ${run}.${i}\n`,
        append: true,
        expected_hash: hash,
      });
      et.push(ms);
      hash = out(r).content_hash;
    }
    add('edit_note_hash_p50', median(et));

    // 8 concurrent writers (their own process) on 8 distinct notes, each chaining its own hash.
    const hashesOf = (paths: string[]) =>
      Promise.all(
        paths.map(async (p) => out((await must('get_notes_info', { paths: [p] })).r).notes[0].content_hash as string),
      );
    const distinct = sample(WRITERS, 211 + run * 13);
    const distinctHashes = await hashesOf(distinct);
    const cpu = process.cpuUsage();
    const { ms: distinctMs } = await writers.distinct(distinct, distinctHashes, WRITES, String(run));
    const used = process.cpuUsage(cpu);
    add('edit_note_8_writers_distinct', (WRITERS * WRITES) / (distinctMs / 1000));
    // This process is the server alone here (the writers have their own): its CPU, every thread, per write.
    add('server_cpu_per_write', (used.user + used.system) / 1000 / (WRITERS * WRITES));

    // The same with the 8 clients in this process, on the server's event loop.
    const local = sample(WRITERS, 5011 + run * 13);
    const localHashes = await hashesOf(local);
    const s = performance.now();
    await Promise.all(
      local.map(async (p, w) => {
        let h = localHashes[w];
        for (let i = 0; i < WRITES; i++)
          h = out(
            (
              await must(
                'edit_note',
                { path: p, content: `\n- local writer ${w} edit ${i}\n`, append: true, expected_hash: h },
                clients[w],
              )
            ).r,
          ).content_hash;
      }),
    );
    add('edit_note_8_writers_distinct_in_process', (WRITERS * WRITES) / ((performance.now() - s) / 1000));

    // 8 concurrent writers (their own process) on one note: stale_precondition → re-read the hash and retry.
    const shared = await writers.shared(sample(1, 307 + run)[0], WRITES / 4, String(run));
    add('edit_note_8_writers_one_note', (WRITERS * (WRITES / 4)) / (shared.ms / 1000));
    add('edit_note_one_note_conflicts', shared.conflicts);

    // move_note with rewrite_links for a note with BACKLINKS backlinks (moved away and back: two samples per run).
    const a = 'bench-move/Bench Hub Target.md';
    const b = 'bench-move/moved/Bench Hub Renamed.md';
    for (const [from, to] of [
      [a, b],
      [b, a],
    ]) {
      const { r, ms } = await must('move_note', { from_path: from, to_path: to, rewrite_links: true });
      const o = out(r);
      if (o.rewritten_notes.length < BACKLINKS || o.partial)
        throw new Error(`move_note rewrote ${o.rewritten_notes.length} notes (partial=${o.partial})`);
      add('move_note_200_backlinks', ms);
      add('move_note_rewritten_links', o.rewritten_links);
    }
  }

  const m = (k: string) => median(fig[k]);
  line('read_note_http_p50', m('read_note_http_p50'), 'ms', 2);
  line('read_note_http_p95', m('read_note_http_p95'), 'ms', 2);
  line('read_note_server_p50', m('read_note_server_p50'), 'ms', 2);
  line('read_note_server_p95', m('read_note_server_p95'), 'ms', 2);
  line('read_note_errors', m('read_note_errors'), 'notes', 0, `of ${READS} per run; a refused read counts here`);
  line('list_notes_page_p50', m('list_notes_page_p50'), 'ms', 2, 'limit 50');
  line('list_notes_next_page_p50', m('list_notes_next_page_p50'), 'ms', 2, 'limit 50, keyset cursor');
  line('create_note_p50', m('create_note_p50'), 'ms', 2);
  line('edit_note_expected_hash_p50', m('edit_note_hash_p50'), 'ms', 2, 'append, one writer');
  line(
    'edit_note_8_writers_distinct',
    m('edit_note_8_writers_distinct'),
    'writes/s',
    0,
    'goal >= 300; clients in their own process',
  );
  line(
    'server_cpu_per_write',
    m('server_cpu_per_write'),
    'ms',
    2,
    'the server process, every thread, during the distinct-notes phase above',
  );
  line(
    'edit_note_8_writers_distinct_in_process',
    m('edit_note_8_writers_distinct_in_process'),
    'writes/s',
    0,
    'clients on the server event loop',
  );
  line(
    'edit_note_8_writers_one_note',
    m('edit_note_8_writers_one_note'),
    'writes/s',
    0,
    `${m('edit_note_one_note_conflicts')} stale-hash retries per run; clients in their own process`,
  );
  line(
    'move_note_rewrite_200_backlinks',
    m('move_note_200_backlinks'),
    'ms',
    0,
    `${m('move_note_rewritten_links')} links rewritten`,
  );
  // Embedded PGlite names each parameterised statement text (statement-cache.ts): how many this whole
  // bench left prepared, and the database backend's memory with them.
  if (server.host.database.engine.kind === 'pglite') {
    const named = (await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_prepared_statements`.execute(db)).rows[0]
      .n;
    const bytes = Number(
      (await sql<{ b: string }>`SELECT sum(total_bytes)::bigint AS b FROM pg_backend_memory_contexts`.execute(db))
        .rows[0].b,
    );
    line('pglite_named_statements', named, 'statements', 0);
    line('pglite_backend_memory', bytes / 1048576, 'MiB', 1);
  }
  console.log(`runs: ${RUNS}`);
  line('rss', process.memoryUsage().rss / 1048576, 'MiB', 0);
  writers.close();
} finally {
  await server.close();
}
