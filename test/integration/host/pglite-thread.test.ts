// Embedded PGlite on its own worker thread (database.pgliteThread, the default) behaves as the in-process
// engine does for every caller: results, SQLSTATE errors, transactions, extensions, persistence; and a
// long statement leaves the event loop free while it runs.
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { sql } from 'kysely';
import { openDatabase, type DatabaseService } from '../../../src/host/db/index.js';
import { isDatabaseUnavailable } from '../../../src/host/db/unavailable.js';
import { serialize } from 'pg-protocol';
import { ThreadedPglite } from '../../../src/host/db/engines/pglite-threaded.js';
import { pgliteTemplate, startTestServer } from '../../../src/host/testing/harness.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-pglite-thread-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const url = `pglite:${path.join(dir, 'db')}`;

t.test('queries, errors, transactions and extensions through the thread', async (t) => {
  const d = await openDatabase(url, { baseDir: '/' });
  t.teardown(() => d.close());
  t.match(d.engine.description, /own thread/);
  t.equal(d.engine.kind, 'pglite');

  await sql`CREATE TABLE t (id int PRIMARY KEY, body text, e vector(3))`.execute(d.db);
  await sql`INSERT INTO t VALUES (1, ${'first'}, '[1,2,3]'), (2, ${'ünïcødé ✓'}, '[0,0,1]')`.execute(d.db);
  const rows = (
    await sql<{
      id: number;
      body: string;
      dist: number;
    }>`SELECT id, body, e <-> '[1,2,3]' AS dist FROM t ORDER BY id`.execute(d.db)
  ).rows;
  t.same(rows, [
    { id: 1, body: 'first', dist: 0 },
    { id: 2, body: 'ünïcødé ✓', dist: 3 },
  ]);
  const sim = (await sql<{ s: number }>`SELECT similarity('vault', 'vaults') AS s`.execute(d.db)).rows[0].s;
  t.ok(sim > 0.5 && sim < 1, `pg_trgm answers (${sim})`);

  const missing = await sql`SELECT * FROM no_such_table`.execute(d.db).catch((e: unknown) => e as { code?: string });
  t.equal((missing as { code?: string }).code, '42P01', 'a server error keeps its SQLSTATE');
  t.equal(
    (await sql<{ n: number }>`SELECT 1 AS n`.execute(d.db)).rows[0].n,
    1,
    'the connection is usable after an error',
  );

  const dup = await d.db
    .transaction()
    .execute(async (trx) => {
      await sql`INSERT INTO t (id, body) VALUES (3, 'kept?')`.execute(trx);
      await sql`INSERT INTO t (id, body) VALUES (1, 'duplicate')`.execute(trx);
    })
    .catch((e: unknown) => e as { code?: string });
  t.equal((dup as { code?: string }).code, '23505');
  t.equal(
    (await sql<{ n: number }>`SELECT count(*)::int AS n FROM t`.execute(d.db)).rows[0].n,
    2,
    'the failed transaction rolled back',
  );

  // `begin` is answered on this side and sent with the first statement: the transaction is still real.
  await d.db.transaction().execute(async (trx) => {
    await sql`INSERT INTO t (id, body) VALUES (4, 'in a transaction')`.execute(trx);
  });
  t.equal(
    (await sql<{ n: number }>`SELECT count(*)::int AS n FROM t WHERE id = 4`.execute(d.db)).rows[0].n,
    1,
    'its commit persisted the row',
  );
  const thrown = await d.db
    .transaction()
    .execute(async (trx) => {
      await sql`INSERT INTO t (id, body) VALUES (5, 'rolled back')`.execute(trx);
      const ts = (await sql<{ a: Date; b: Date }>`SELECT now() AS a, clock_timestamp() AS b`.execute(trx)).rows[0];
      await new Promise((r) => setTimeout(r, 20));
      const again = (await sql<{ a: Date }>`SELECT now() AS a`.execute(trx)).rows[0];
      t.equal(again.a.getTime(), ts.a.getTime(), 'now() holds still across statements: one transaction');
      throw new Error('the caller gives up');
    })
    .catch((e: Error) => e.message);
  t.equal(thrown, 'the caller gives up');
  t.equal(
    (await sql<{ n: number }>`SELECT count(*)::int AS n FROM t WHERE id = 5`.execute(d.db)).rows[0].n,
    0,
    'a transaction that throws after its first statement rolls back',
  );
  const empty = await d.db.transaction().execute(async () => 'nothing ran');
  t.equal(empty, 'nothing ran', 'a transaction with no statement commits');
  t.equal((await sql<{ n: number }>`SELECT 1 AS n`.execute(d.db)).rows[0].n, 1, 'and leaves the connection usable');
  await sql`DELETE FROM t WHERE id = 4`.execute(d.db);

  // Many callers at once share the single connection; each gets its own answer.
  const answers = await Promise.all(
    Array.from({ length: 40 }, (_, i) => sql<{ v: string }>`SELECT ${`v${i}`}::text AS v`.execute(d.db)),
  );
  t.same(
    answers.map((a) => a.rows[0].v),
    Array.from({ length: 40 }, (_, i) => `v${i}`),
  );

  // A large answer crosses the thread boundary whole.
  const big = (
    await sql<{
      n: number;
      s: string;
    }>`SELECT count(*)::int AS n, max(repeat('x', 1000) || g) AS s FROM generate_series(1, 50000) g`.execute(d.db)
  ).rows[0];
  t.equal(big.n, 50000);
  const many = (await sql<{ g: number }>`SELECT g FROM generate_series(1, 20000) g`.execute(d.db)).rows;
  t.equal(many.length, 20000);
  t.equal(many[19999].g, 20000);
});

t.test('the thread keeps nothing of the answers it carried', async (t) => {
  // Ten answers of 40,000 rows each, under a 48 MiB old generation: a thread that kept every message it
  // carried (PGlite's execProtocolRaw did, ~10 MiB of parsed rows per answer here) runs out of heap.
  const dataDir = path.join(dir, 'carried');
  cpSync(await pgliteTemplate(), dataDir, { recursive: true });
  const thread = new ThreadedPglite(dataDir, undefined, undefined, { maxOldGenerationSizeMb: 48 });
  t.teardown(() => thread.close());
  await thread.waitReady;
  const query = new Uint8Array(serialize.query("SELECT i, repeat('x', 100) AS pad FROM generate_series(1, 40000) i"));
  for (let round = 0; round < 10; round++) {
    const messages = await thread.execProtocolStream(query);
    t.equal(messages.filter((m) => m.name === 'dataRow').length, 40_000, `answer ${round + 1} whole`);
  }
});

t.test('the event loop runs while a statement executes', async (t) => {
  const d = await openDatabase(url, { baseDir: '/' });
  t.teardown(() => d.close());
  const order: string[] = [];
  const query = sql`SELECT count(*) FROM generate_series(1, 2000000) a`.execute(d.db).then(() => order.push('query'));
  setImmediate(() => order.push('immediate'));
  await query;
  t.same(order, ['immediate', 'query']);
});

t.test('a query waiting for the connection when the database closes fails as unavailable, never hangs', async (t) => {
  const d = await openDatabase(url, { baseDir: '/' });
  // The embedded pool has one connection: a running statement holds it, the next query waits for it.
  const running = sql`SELECT pg_sleep(0.3)`.execute(d.db).then(
    () => 'done',
    (e: Error) => e.message,
  );
  const queued = sql`SELECT 1`.execute(d.db).then(
    () => 'answered',
    (e: { code?: string; message: string }) => e,
  );
  await new Promise((r) => setTimeout(r, 50));
  const closed = d.close();
  const outcome = await Promise.race([queued, new Promise((r) => setTimeout(() => r('still waiting'), 5_000))]);
  t.match(outcome, { code: '57P01', message: /closing/ }, 'the waiting query is failed, with a shutdown SQLSTATE');
  t.ok(isDatabaseUnavailable(outcome), 'a tool call answers it with the retryable refusal');
  t.equal(await running, 'done', 'the statement that held the connection finished');
  await closed;
  const after = await sql`SELECT 1`.execute(d.db).then(
    () => 'answered',
    (e: Error) => e.message,
  );
  t.not(after, 'answered', 'a query after the close is refused');
});

t.test('data written through the thread is on disk for the in-process engine', async (t) => {
  let d: DatabaseService = await openDatabase(url, { baseDir: '/' });
  await sql`INSERT INTO t (id, body) VALUES (10, 'persisted')`.execute(d.db);
  await d.close();
  d = await openDatabase(url, { baseDir: '/', pgliteThread: false });
  t.teardown(() => d.close());
  t.notMatch(d.engine.description, /own thread/);
  t.equal((await sql<{ body: string }>`SELECT body FROM t WHERE id = 10`.execute(d.db)).rows[0]?.body, 'persisted');
});

t.test('a data directory PGlite cannot open is a clear startup error, and the thread ends', async (t) => {
  const bad = path.join(dir, 'bad');
  mkdirSync(bad);
  writeFileSync(path.join(bad, 'PG_VERSION'), '99\n');
  await t.rejects(openDatabase(`pglite:${bad}`, { baseDir: '/' }), /PGlite failed to open .*bad/);
});

t.test('database.pgliteThread: false serves tools from the event loop thread', async (t) => {
  const server = await startTestServer({
    config: { database: { pgliteThread: false } },
    files: { 'a.md': '# A\n\nhello thread\n' },
  });
  t.teardown(() => server.close());
  t.notMatch(server.host.database.engine.description, /own thread/);
  const client = await server.connect();
  const r = (await client.callTool({ name: 'read_note', arguments: { path: 'a.md' } })) as {
    isError?: boolean;
    structuredContent?: { content?: string };
  };
  t.notOk(r.isError);
  t.match(r.structuredContent?.content ?? '', /hello thread/);
});
