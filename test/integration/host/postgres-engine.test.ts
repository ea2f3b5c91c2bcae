// The server engine: the same host, migrations and audit path over a real PostgreSQL 15 via `pg`.
import t from 'tap';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { postgresAvailable, startPostgres } from '../../../src/host/testing/postgres-server.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const echo = path.resolve(here, '../../fixtures/families/echo');

t.test(
  'serves over a native PostgreSQL server',
  { skip: postgresAvailable() ? false : 'PostgreSQL 15 server binaries not installed' },
  async (t) => {
    const pg = await startPostgres();
    t.teardown(() => pg.stop());
    const server = await startTestServer({ builtinDir: null, config: { plugins: [echo], database: { url: pg.url } } });
    t.teardown(() => server.close());
    t.equal(server.host.database.engine.kind, 'postgres');
    const client = await server.connect();
    const r = await client.callTool({ name: 'echo', arguments: { text: 'pg' } });
    t.same(r.structuredContent, { text: 'pg', length: 2, optional: false });
    const w = await client.callTool({ name: 'append_note', arguments: { path: 'pg.md', text: 'x' } });
    t.notOk(w.isError);
    await server.host.audit.flush();
    const rows = await server.host.database.db
      .selectFrom('usage_logs')
      .select(['tool', 'outcome'])
      .orderBy('id')
      .execute();
    t.same(
      rows.map((x) => x.tool),
      ['echo', 'append_note'],
    );
    const health = (await (
      await fetch(`${server.url}/health`, { headers: { authorization: `Bearer ${server.key}` } })
    ).json()) as Record<string, unknown>;
    t.equal(health.engine, 'postgres');
    t.equal(health.db, 'ok');
  },
);

t.test(
  'a revocation through one process empties the key cache of every server sharing the database',
  { skip: postgresAvailable() ? false : 'PostgreSQL 15 server binaries not installed' },
  async (t) => {
    const pg = await startPostgres();
    t.teardown(() => pg.stop());
    const server = await startTestServer({
      builtinDir: null,
      config: { plugins: [echo], database: { url: pg.url }, auth: { keyCacheSeconds: 300 } },
    });
    t.teardown(() => server.close());
    const status = async () => {
      const res = await fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${server.readKey}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'p', version: '1' } },
        }),
      });
      await res.body?.cancel();
      return res.status;
    };
    t.equal(await status(), 200, 'verified once, now cached for 300 s');
    // Another process (a CLI, a replica) revokes the key on the shared server database.
    const { openDatabase } = await import('../../../src/host/db/index.js');
    const { revokeApiKey } = await import('../../../src/host/auth/api-keys.js');
    const other = await openDatabase(pg.url, { baseDir: '/', poolSize: 1, pgliteMaintenanceSeconds: 15 });
    t.equal(other.maintenance, undefined, "a server's autovacuum does the embedded maintenance's work: none runs");
    t.equal((await revokeApiKey(other.db, 'test-ro')).length, 1);
    await other.close();
    const deadline = Date.now() + 2000;
    let code = await status();
    while (code === 200 && Date.now() < deadline) code = await status();
    t.equal(code, 401, 'refused long before the cache would have expired');
  },
);
