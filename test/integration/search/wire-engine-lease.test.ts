// The wire test engine (PGlite behind pglite-socket, the semantic-*-wire tests' server engine) serves every
// connection from one session, so a transaction of another connection holds the lease connection's statements
// until it ends. With the engine's settings (startPgliteWire's config: 10 s lease rounds, so a lease statement may
// take 60 s) the process keeps its vault through a 4.5 s transaction; with the default rounds (a 3 s limit) the
// lease connection counted lost, and there its advisory lock stays with the shared session, so the vault stayed on
// standby for good (what failed semantic-hnsw-wire under a loaded full run).
import t from 'tap';
import pg from 'pg';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { startPgliteWire } from '../../../src/host/testing/pglite-wire.js';

const wire = await startPgliteWire();
const server = await startTestServer({
  files: { 'Alpha.md': '# Alpha\n\nThe first letter.\n' },
  config: {
    ...wire.config,
    families: { files: { enabled: false }, graph: { enabled: false }, tasks: { enabled: false } },
  },
});
t.teardown(async () => {
  await server.close();
  await wire.stop();
});

t.test("the vault stays served through another connection's long transaction", async (t) => {
  const vaultId = server.host.vaultHandle.id;
  t.same(server.host.vaults.servingIds(), [vaultId], 'served at start');
  const other = new pg.Client({ connectionString: wire.url });
  await other.connect();
  t.teardown(() => other.end());
  await other.query('BEGIN');
  await other.query('SELECT 1');
  await new Promise((r) => setTimeout(r, 4500));
  await other.query('COMMIT');
  // A few lease rounds after it.
  await new Promise((r) => setTimeout(r, 2000));
  t.same(server.host.vaults.servingIds(), [vaultId], 'still served');
  const client = await server.connect();
  t.teardown(() => client.close());
  const r = await client.callTool({ name: 'read_note', arguments: { path: 'Alpha' } });
  t.notOk(r.isError, 'and its tools answer');
});
