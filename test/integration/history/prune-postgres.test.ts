// History's prune on a PostgreSQL 15 server, where statements of other sessions run beside it: a revision that
// names an already stored version, committed while a prune collects unreferenced versions, keeps its bytes (the
// collect waits for it, then sees it). Skipped where the PostgreSQL 15 binaries are not installed.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import type { HistoryRecorder } from '../../../plugins/history/recorder.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { postgresAvailable, startPostgres } from '../../../src/host/testing/postgres-server.js';

t.test(
  "a revision committed during a prune's collect keeps the version it names",
  { skip: postgresAvailable() ? false : 'PostgreSQL 15 server binaries not installed' },
  async (t) => {
    const pgServer = await startPostgres();
    t.teardown(() => pgServer.stop());
    const server = await startTestServer({
      config: {
        database: { url: pgServer.url },
        families: {
          files: { enabled: false },
          graph: { enabled: false },
          tasks: { enabled: false },
          search: { enabled: false },
        },
      },
    });
    t.teardown(() => server.close());
    t.equal(server.host.database.engine.kind, 'postgres');
    const db = server.host.database.db;
    const vaultId = server.host.vaultHandle.id;
    const client = await server.connect();
    t.teardown(() => client.close());
    const made = await client.callTool({
      name: 'create_note',
      arguments: { path: 'Old.md', content: '# Old\n\nA version kept once.\n' },
    });
    t.notOk(made.isError, 'a note, its version kept');
    const bytes = readFileSync(path.join(server.vaultDir, 'Old.md'));
    const hash = server.host.vaultHandle.fs.contentHash(bytes);
    const kept = () =>
      sql<{ n: number }>`SELECT count(*)::int AS n FROM history_blobs WHERE vault_id = ${vaultId} AND hash = ${hash}`
        .execute(db)
        .then((r) => r.rows[0].n);
    t.equal(await kept(), 1);
    // Its only revision is past retention: the prune drops it, and the version is then unreferenced.
    await sql`UPDATE history_revisions SET at = now() - interval '400 days' WHERE vault_id = ${vaultId}`.execute(db);

    // Another session adds a revision naming that version (an outside copy of the same text) and has not
    // committed it when the prune starts.
    const other = new pg.Client({ connectionString: pgServer.url });
    await other.connect();
    t.teardown(() => other.end());
    await other.query('BEGIN');
    await other.query(
      `INSERT INTO history_revisions (vault_id, path, kind, hash, size, skipped, actor_kind)
       VALUES ($1, 'Copy.md', 'outside', $2, $3, NULL, 'human')`,
      [vaultId, hash, bytes.length],
    );
    const recorder = server.host.manager.registry.providedService('history') as HistoryRecorder;
    let pruneDone = false;
    const pruning = recorder.prune().finally(() => (pruneDone = true));
    await new Promise((r) => setTimeout(r, 300));
    t.notOk(pruneDone, 'the collect waits for the revision being added');
    await other.query('COMMIT');
    const result = await pruning;
    t.ok(result.revisions >= 1, 'the old revision is pruned');
    t.equal(await kept(), 1, 'the version the new revision names is still kept');
  },
);
