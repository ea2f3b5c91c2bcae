// The audit writer's statement (src/host/audit/rollup.ts) stores every usage row as recorded, though a row
// travels compactly (its time as an offset from the batch's first row, its duration in whole microseconds,
// its repeated columns as an index into the batch's distinct combinations): each column read back, nulls
// included, and the rollups counting the same calls. usage_logs keeps a BRIN index on its time and no btree
// but its key and the panel's partial one (migration 0012).
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { sql } from 'kysely';
import { openDatabase } from '../../../src/host/db/index.js';
import { AuditWriter, type UsageRow } from '../../../src/host/audit/batch-writer.js';
import { pgliteTemplate } from '../../../src/host/testing/harness.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-audit-rows-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const silent = { debug() {}, info() {}, warn() {}, error() {} } as never;

t.test('every column of every row is stored as recorded', async (t) => {
  cpSync(await pgliteTemplate(), path.join(dir, 'db'), { recursive: true });
  const database = await openDatabase(`pglite:${path.join(dir, 'db')}`, { baseDir: '/' });
  t.teardown(() => database.close());
  const db = database.db;
  const start = Date.UTC(2026, 11, 6, 23, 59, 59, 987);
  const rows: UsageRow[] = [];
  for (let i = 0; i < 23; i++)
    rows.push({
      // Out of order, across an hour and a day, some before the batch's first row.
      at: new Date(start + (i % 2 ? 1 : -1) * i * 37_123),
      vaultId: i % 4 === 3 ? null : 1,
      credentialId: i % 5 === 4 ? null : `key-${i % 3}`,
      credentialName: i % 3 === 2 ? null : `name ${i % 3} ✓`,
      tool: ['read_note', 'search_notes', 'echo'][i % 3]!,
      family: i % 6 === 5 ? null : 'notes',
      params: i === 7 ? '' : `{"path":"n-${i}.md","q":"it's \\"quoted\\", {braced}"}`,
      durationMs: [0.123456, 1.5000000000000002, 6543.21, 0, Number.NaN][i % 5]!,
      responseBytes: 100 + i,
      outcome: (['ok', 'refused', 'error'] as const)[i % 3]!,
      refusalCode: i % 3 === 1 ? 'E_NOT_FOUND' : null,
      resultCount: i % 4 === 0 ? 0 : i % 4 === 1 ? null : i,
    });
  const writer = new AuditWriter(
    db,
    { enabled: true, paramsMaxChars: 200, batchSize: 1000, flushIntervalMs: 60_000, maxQueue: 10_000 },
    silent,
  );
  for (const r of rows) writer.record(r);
  await writer.close();
  t.same([writer.written, writer.failures], [rows.length, 0], 'the batch is written');

  const stored = (
    await sql<Record<string, unknown>>`SELECT at, vault_id, credential_id, credential_name, tool, family, params,
      duration_ms, response_bytes, outcome, refusal_code, result_count FROM usage_logs ORDER BY id`.execute(db)
  ).rows;
  t.same(
    stored,
    rows.map((r) => ({
      at: r.at,
      vault_id: r.vaultId,
      credential_id: r.credentialId,
      credential_name: r.credentialName,
      tool: r.tool,
      family: r.family,
      params: r.params,
      duration_ms: Number.isFinite(r.durationMs) ? Math.round(r.durationMs * 1000) / 1000 : 0,
      response_bytes: r.responseBytes,
      outcome: r.outcome,
      refusal_code: r.refusalCode,
      result_count: r.resultCount ?? null,
    })),
    'each row reads back column for column, its time to the millisecond, in the order recorded',
  );
  const counted = (
    await sql<{ hourly: string; daily: string }>`SELECT (SELECT sum(calls) FROM usage_hourly) AS hourly,
      (SELECT sum(calls) FROM usage_daily) AS daily`.execute(db)
  ).rows[0];
  t.same([Number(counted?.hourly), Number(counted?.daily)], [rows.length, rows.length], 'the rollups count every call');

  const indexes = (
    await sql<{ name: string; def: string }>`SELECT indexname AS name, indexdef AS def FROM pg_indexes
      WHERE tablename = 'usage_logs' ORDER BY indexname`.execute(db)
  ).rows;
  t.same(
    indexes.map((i) => i.name),
    ['usage_logs_at_brin', 'usage_logs_pkey', 'usage_logs_zero_results'],
    'one BRIN index on the time, the key and the panel partial index',
  );
  t.match(indexes[0]?.def, /USING brin \(at\)/);
});
