// The index wired into the real host: a family that requires 'index' loads, its contributor sees the
// vault's notes through the registry, /health reports index counts, and write-through works via the
// named service a handler would get from ctx.service('index').
import t from 'tap';
import { corpus as corpusPath } from '../../fixtures/corpus.js';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const recorder = path.resolve(here, '../../fixtures/families/index-recorder');
const corpus = corpusPath('obsidian-tasks-contributing');

const server = await startTestServer({
  builtinDir: null,
  copyVaultFrom: corpus,
  config: { plugins: [recorder], index: { debounceMs: 30 } },
});
t.teardown(() => server.close());
const host = server.host;

t.test('a family requiring index loads and its contributor receives every note', async (t) => {
  t.equal(host.manager.registry.status.get('index-recorder')?.state, 'serving');
  const index = host.services.named.get('index') as IndexService;
  t.ok(index, 'index is a named host service');
  t.equal(await index.whenReady(host.vaultHandle.id, 30_000), true);
  const st = index.status(host.vaultHandle.id);
  t.ok(st.indexed > 50, `${st.indexed} notes indexed`);
  const writes = await sql<{
    n: string;
  }>`SELECT count(DISTINCT path) AS n FROM index_recorder_calls WHERE kind = 'write'`.execute(host.database.db);
  t.equal(Number(writes.rows[0].n), st.indexed, 'one write per indexed note');
  t.same(st.backlog, { 'index-recorder/calls': 0 });
});

t.test('/health carries index counts', async (t) => {
  const res = await fetch(`${server.url}/health`, { headers: { authorization: `Bearer ${server.key}` } });
  const body = (await res.json()) as { index?: Record<string, unknown> };
  t.ok(body.index, 'index key present');
  t.type(body.index?.indexed, 'number');
  t.type(body.index?.pending, 'number');
  t.equal(body.index?.watcher, 'watching');
  t.notOk('lastError' in (body.index ?? {}), 'no messages on /health');
});

t.test('write-through through the named service is immediate', async (t) => {
  const index = host.services.named.get('index') as IndexService;
  const fs = host.vaultHandle.fs;
  await fs.create('Inbox/Through.md', Buffer.from('# Through\nbody\n'));
  await index.noteWritten(host.vaultHandle.id, 'Inbox/Through.md');
  const row = await host.database.db
    .selectFrom('notes')
    .select(['title'])
    .where('path', '=', 'Inbox/Through.md')
    .executeTakeFirst();
  t.equal(row?.title, 'Through');
  const calls = await sql<{
    kind: string;
    title: string;
  }>`SELECT kind, title FROM index_recorder_calls WHERE path = 'Inbox/Through.md'`.execute(host.database.db);
  t.same(calls.rows, [{ kind: 'write', title: 'Through' }]);
});
