// Embedded PGlite names parameterised statements (prepared once per connection) on both of its paths:
// a repeated text is parsed once, a text without parameters stays unnamed, and a table whose shape
// changes does not break a prepared query over it; a client the pool drops after a failed query (the
// maintenance pass's path) leaves the one session clean for the next, not unusable.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { sql } from 'kysely';
import { openDatabase } from '../../../src/host/db/index.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-pglite-statements-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

for (const thread of [true, false]) {
  t.test(`named statements, PGlite ${thread ? 'on its own thread' : 'on the calling thread'}`, async (t) => {
    const d = await openDatabase(`pglite:${path.join(dir, `db-${thread}`)}`, { baseDir: '/', pgliteThread: thread });
    t.teardown(() => d.close());
    const prepared = async () =>
      (
        await sql<{
          name: string;
          statement: string;
        }>`SELECT name, statement FROM pg_prepared_statements ORDER BY name`.execute(d.db)
      ).rows;

    await sql`CREATE TABLE t (id int PRIMARY KEY, body text)`.execute(d.db);
    for (let i = 0; i < 5; i++) await sql`INSERT INTO t VALUES (${i}, ${`row ${i}`})`.execute(d.db);
    const byId = (id: number) => sql<Record<string, unknown>>`SELECT * FROM t WHERE id = ${id}`.execute(d.db);
    t.same((await byId(3)).rows, [{ id: 3, body: 'row 3' }]);
    t.same((await byId(4)).rows, [{ id: 4, body: 'row 4' }]);

    const after = await prepared();
    const inserts = after.filter((r) => r.statement.startsWith('INSERT INTO t'));
    t.equal(inserts.length, 1, 'five inserts, one prepared statement');
    t.match(inserts[0].name, /^exo_\d+$/);
    t.equal(after.filter((r) => r.statement.startsWith('SELECT * FROM t')).length, 1);
    t.notOk(
      after.some((r) => r.statement.startsWith('CREATE TABLE')),
      'a text without parameters runs unnamed',
    );

    // The prepared SELECT * would now return another row type: PostgreSQL refuses that for a cached
    // plan (0A000), so the schema change must make the text be prepared again under a new name.
    await sql`ALTER TABLE t ADD COLUMN extra int DEFAULT 7`.execute(d.db);
    t.same((await byId(3)).rows, [{ id: 3, body: 'row 3', extra: 7 }], 'the query sees the new shape');
    t.equal(
      (await prepared()).filter((r) => r.statement.startsWith('SELECT * FROM t')).length,
      2,
      'prepared afresh, under a new name',
    );

    // Inside a transaction, errors and rollbacks behave as with unnamed statements.
    const failed = await d.db
      .transaction()
      .execute(async (trx) => {
        await sql`INSERT INTO t (id, body) VALUES (${10}, ${'kept?'})`.execute(trx);
        await sql`INSERT INTO t (id, body) VALUES (${1}, ${'duplicate'})`.execute(trx);
      })
      .catch((e: { code?: string }) => e.code);
    t.equal(failed, '23505');
    t.same((await byId(10)).rows, [], 'the transaction rolled back');
  });

  t.test(
    `a failed pool.query does not break the engine, PGlite ${thread ? 'on its own thread' : 'on the calling thread'}`,
    async (t) => {
      const d = await openDatabase(`pglite:${path.join(dir, `dropped-${thread}`)}`, {
        baseDir: '/',
        pgliteThread: thread,
      });
      t.teardown(() => d.close());
      const pool = d.engine.pool;
      await sql`CREATE TABLE t (id int PRIMARY KEY)`.execute(d.db);
      // A named statement prepared on the first connection: the next must be able to prepare it again.
      const count = async () =>
        (await sql<{ n: number }>`SELECT count(*)::int AS n FROM t WHERE id > ${0}`.execute(d.db)).rows[0].n;
      await sql`INSERT INTO t VALUES (${1})`.execute(d.db);
      t.equal(await count(), 1);
      // node-postgres' pool drops the client of each of these: the maintenance pass analysing a table dropped since
      // its check, and a failure that leaves a transaction block open on the session.
      for (const failing of [
        'ANALYZE no_such_table',
        'BEGIN; SELECT 1/0',
        'SET LOCAL work_mem = 64; ANALYZE no_such_table',
      ]) {
        // A session setting, kept while the client lives (pooling as usual)…
        await pool.query("SET work_mem = '64kB'");
        t.equal((await pool.query("SELECT current_setting('work_mem') AS w")).rows[0].w, '64kB');
        await t.rejects(pool.query(failing, []), failing);
        t.ok(
          (await pool.query("SELECT setting = reset_val AS same FROM pg_settings WHERE name = 'work_mem'")).rows[0]
            .same,
          '…is not inherited by the client made after one is dropped',
        );
        await sql`INSERT INTO t VALUES (${(await count()) + 1})`.execute(d.db);
        t.equal((await pool.query('SELECT 1 AS ok', [])).rows[0].ok, 1, `the pool serves after "${failing}"`);
      }
      t.equal(await count(), 4, 'every insert after a failure was kept: no transaction stayed open');
    },
  );
}
