// bench/audit: what one audit row costs the embedded engine. The audit writer's own statement (a batch of
// usage rows with its hourly and daily rollups, src/host/audit/rollup.ts) against PGlite on its own thread, as
// the server runs it, beside `SELECT 1` (the round trip every statement pays): ms per batch and µs per row,
// the process's CPU per batch (every thread), median of rounds; and what PGlite spends reading one element of an
// array parameter per type (why rollup.ts sends a row's time and duration as integers): `unnest` of 2,000
// elements counted, less the `SELECT 1` round trip, per element.
// Usage: tsx bench/audit.ts
// Env: BENCH_ROWS (1000, the audit writer's default batch), BENCH_BATCHES (40 per round), BENCH_ROUNDS (5)
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { writeBatchSql } from '../src/host/audit/rollup.js';
import type { UsageRow } from '../src/host/audit/batch-writer.js';
import { openDatabase } from '../src/host/db/index.js';
import { pgliteTemplate } from '../src/host/testing/harness.js';
import { machine, median } from './lib/setup.js';

const ROWS = Number(process.env.BENCH_ROWS ?? 1000);
const BATCHES = Number(process.env.BENCH_BATCHES ?? 40);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-bench-audit-'));
cpSync(await pgliteTemplate(), path.join(dir, 'db'), { recursive: true });
const database = await openDatabase(`pglite:${path.join(dir, 'db')}`, { baseDir: '/', pgliteThread: true });
const row = (i: number): UsageRow => ({
  at: new Date(),
  vaultId: 1,
  credentialId: 'bench-key',
  credentialName: 'bench',
  tool: i % 3 ? 'read_note' : 'search_notes',
  family: 'notes',
  params: `{"path":"note-${i}.md"}`,
  durationMs: 0.3 + (i % 7) * 0.4,
  responseBytes: 120 + i,
  outcome: 'ok',
  refusalCode: null,
  resultCount: i % 5 ? null : 0,
});

/** Per batch: wall ms and the process's CPU ms, over BATCHES statements after 10 unmeasured ones. */
async function measure(run: () => Promise<unknown>): Promise<{ ms: number; cpuMs: number }> {
  for (let i = 0; i < 10; i++) await run();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < BATCHES; i++) await run();
  const cpu = process.cpuUsage(cpu0);
  return { ms: (performance.now() - t0) / BATCHES, cpuMs: (cpu.user + cpu.system) / 1000 / BATCHES };
}

try {
  console.log(
    `# machine: ${machine()}; embedded PGlite on its own thread; ${ROWS} rows a batch, ${BATCHES} batches a round`,
  );
  const batch = Array.from({ length: ROWS }, (_, i) => row(i));
  const audit: Array<{ ms: number; cpuMs: number }> = [];
  const trip: Array<{ ms: number; cpuMs: number }> = [];
  const ELEMENTS = 2000;
  const now = Date.now();
  const arrays = {
    timestamptz: sql`${Array.from({ length: ELEMENTS }, (_, i) => new Date(now + i))}::timestamptz[]`,
    float8: sql`${Array.from({ length: ELEMENTS }, (_, i) => 0.3 + i * 0.37)}::float8[]`,
    int8: sql`${Array.from({ length: ELEMENTS }, (_, i) => now + i)}::int8[]`,
    text: sql`${Array.from({ length: ELEMENTS }, (_, i) => `{"path":"note-${i}.md"}`)}::text[]`,
  };
  const elements = new Map<string, number[]>();
  for (let r = 0; r < ROUNDS; r++) {
    audit.push(await measure(() => writeBatchSql(batch).execute(database.db)));
    const round = await measure(() => sql`SELECT 1`.execute(database.db));
    trip.push(round);
    for (const [type, array] of Object.entries(arrays)) {
      const { ms } = await measure(() => sql`SELECT count(*) FROM unnest(${array})`.execute(database.db));
      elements.set(type, [...(elements.get(type) ?? []), ((ms - round.ms) * 1000) / ELEMENTS]);
    }
  }
  const line = (name: string, xs: Array<{ ms: number; cpuMs: number }>, perRow: boolean) => {
    const ms = xs.map((x) => x.ms);
    const per = perRow ? `, ${((median(ms) * 1000) / ROWS).toFixed(1)} µs/row` : '';
    console.log(
      `${name}: ${median(ms).toFixed(2)} ms/statement (min ${Math.min(...ms).toFixed(2)}, max ${Math.max(...ms).toFixed(2)})${per}, CPU ${median(xs.map((x) => x.cpuMs)).toFixed(2)} ms/statement (every thread)`,
    );
  };
  line('audit_batch', audit, true);
  line('select_1_round_trip', trip, false);
  for (const [type, us] of elements)
    console.log(
      `array_element_${type}: ${median(us).toFixed(2)} µs an element (min ${Math.min(...us).toFixed(2)}, max ${Math.max(...us).toFixed(2)})`,
    );
} finally {
  await database.close();
  rmSync(dir, { recursive: true, force: true });
}
