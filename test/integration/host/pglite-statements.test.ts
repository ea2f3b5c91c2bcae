// Embedded PGlite names parameterised statements (prepared once per connection) on both of its paths:
// a repeated text is parsed once, a text without parameters stays unnamed, and a table whose shape
// changes does not break a prepared query over it.
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
}
