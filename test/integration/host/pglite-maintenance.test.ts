// The embedded engine's maintenance pass (what a server's autovacuum does, PGlite running none): a named statement
// planned while its table was empty keeps that plan as the table grows, until the pass analyses the table; GIN
// indexes that buffer inserts have their pending lists merged; a table analysed over a small sample while rows are
// written is analysed in full once they stop; the pass runs only where it is asked for.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { sql } from 'kysely';
import { openDatabase } from '../../../src/host/db/index.js';
import { openPglite } from '../../../src/host/db/engines/pglite.js';
import {
  DEFAULT_MAINTENANCE_POLICY,
  EmbeddedMaintenance,
  type MaintenancePolicy,
  REFINE_AFTER_QUIET,
  WRITING_STATISTICS_TARGET,
} from '../../../src/host/db/engines/pglite-maintenance.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-pglite-maintenance-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/** An embedded engine of its own with a maintenance pass whose full passes are an hour apart (the test runs them). */
async function maintained(t: Test, name: string, policy: Partial<MaintenancePolicy>) {
  const engine = await openPglite(path.join(dir, name), { thread: false });
  const m = new EmbeddedMaintenance(engine.pool, { ...DEFAULT_MAINTENANCE_POLICY, intervalSeconds: 3600, ...policy });
  t.teardown(async () => {
    await m.stop();
    await engine.close();
  });
  return { engine, m };
}

t.test('a plan made on an empty table is replaced once the pass analyses it', async (t) => {
  // An hour between passes: the test runs them itself.
  const d = await openDatabase(`pglite:${path.join(dir, 'plans')}`, { baseDir: '/', pgliteMaintenanceSeconds: 3600 });
  t.teardown(() => d.close());
  t.ok(d.maintenance, 'the embedded engine gets a maintenance pass when asked');
  await sql`CREATE TABLE big (id int PRIMARY KEY, v text NOT NULL, words tsvector, tags text[])`.execute(d.db);
  // The shape of the keyword contributor's "old rows" read: a batch of ids joined to the table.
  const lookup = (ids: number[]) =>
    sql<{
      v: string;
    }>`SELECT b.v FROM big b JOIN jsonb_to_recordset(${JSON.stringify(ids.map((id) => ({ id })))}::jsonb) AS r(id int) ON r.id = b.id`.execute(
      d.db,
    );
  for (let i = 0; i < 8; i++) await lookup([i]); // past the plan cache's five custom plans
  await sql`INSERT INTO big SELECT g, repeat('x', 200), to_tsvector('simple', 'w' || (g % 50) || ' common'), ARRAY['t' || (g % 7)]
    FROM generate_series(1, 20000) g`.execute(d.db);
  const plan = async () => {
    const name = (
      await sql<{
        name: string;
      }>`SELECT name FROM pg_prepared_statements WHERE statement LIKE 'SELECT b.v FROM big b%'`.execute(d.db)
    ).rows[0]?.name;
    t.ok(name, 'the lookup runs as a named statement');
    const rows = await sql<{ 'QUERY PLAN': string }>`EXPLAIN EXECUTE ${sql.raw(name!)}('[{"id": 5}]')`.execute(d.db);
    return rows.rows.map((r) => r['QUERY PLAN']).join('\n');
  };
  const stale = await plan();
  t.match(stale, /Seq Scan on big/, 'before a pass the cached plan still reads the whole table');

  const run = await d.maintenance!.runOnce();
  t.ok(run.analysed.includes('big'), 'the grown table is analysed');
  t.match(await plan(), /Index Scan using big_pkey/, 'after it the statement is planned on the real table');
  t.same((await lookup([5])).rows, [{ v: 'x'.repeat(200) }]);

  // The pass found rows written since the check before it (the first check counts every row), as in a first index:
  // the table was analysed over a small sample, then in full once REFINE_AFTER_QUIET checks in a row find none written.
  const bounds = async () =>
    (
      await sql<{
        n: number;
      }>`SELECT array_length(histogram_bounds::text::text[], 1) AS n FROM pg_stats WHERE tablename = 'big' AND attname = 'id'`.execute(
        d.db,
      )
    ).rows[0]?.n;
  t.ok(run.busy, 'the pass saw rows being written');
  t.equal(await bounds(), WRITING_STATISTICS_TARGET + 1, 'analysed over a small sample while rows were being written');
  // Columns whose type has its own analysis (tsvector lexemes, array elements) wait for the full ANALYZE.
  const elements = async () =>
    (
      await sql<{
        attname: string;
        elems: number | null;
      }>`SELECT attname, array_length(most_common_elems::text::text[], 1) AS elems FROM pg_stats
        WHERE tablename = 'big' AND attname IN ('words', 'tags') ORDER BY attname`.execute(d.db)
    ).rows;
  t.same(await elements(), [], 'no element statistics while rows were being written');
  const again = await d.maintenance!.runOnce();
  t.notOk(again.analysed.includes('big'), 'a table that has not changed since is not due');
  t.same(again.refined, [], 'the first check without writes may be a short pause in the writing: nothing refined');
  for (let i = 2; i < REFINE_AFTER_QUIET; i++) t.same((await d.maintenance!.runOnce()).refined, []);
  t.equal(await bounds(), WRITING_STATISTICS_TARGET + 1);
  const settled = await d.maintenance!.runOnce();
  t.same(settled.refined, ['big'], 'once writing stopped, the sampled table is analysed again in full');
  t.equal(await bounds(), 101, "in full: PostgreSQL's default statistics target");
  t.match(
    await elements(),
    [
      { attname: 'tags', elems: Number },
      { attname: 'words', elems: Number },
    ],
    'and with the element statistics of the tsvector and array columns',
  );
  const after = await d.maintenance!.runOnce();
  t.same([after.analysed, after.refined], [[], []], 'and then left alone');
});

t.test('while rows are written, a table that did not double keeps its element statistics up to date', async (t) => {
  // Passes run by the test; a table may be analysed again at once.
  const { engine, m } = await maintained(t, 'churn', { minGapSeconds: 0 });
  await engine.pool.query('CREATE TABLE churn (id int PRIMARY KEY, words tsvector)');
  await engine.pool.query("INSERT INTO churn SELECT g, to_tsvector('simple', 'alpha') FROM generate_series(1, 1000) g");
  const elements = async () =>
    (
      await engine.pool.query<{ elems: string[] | null }>(
        "SELECT most_common_elems::text::text[] AS elems FROM pg_stats WHERE tablename = 'churn' AND attname = 'words'",
      )
    ).rows[0]?.elems ?? null;
  t.ok((await m.runOnce()).analysed.includes('churn'), 'the new table is analysed while rows are written');
  t.equal(await elements(), null, 'without element statistics: it grew from nothing');
  for (let i = 0; i < REFINE_AFTER_QUIET; i++) await m.runOnce();
  t.same(await elements(), ['alpha'], 'refined in full once writing stopped');
  await engine.pool.query("UPDATE churn SET words = to_tsvector('simple', 'omega')");
  const run = await m.runOnce();
  t.ok(run.busy && run.analysed.includes('churn'), 'rewritten rows make it due while rows are written');
  t.same(await elements(), ['omega'], 'its element statistics are taken over the sample, as the table did not grow');
});

t.test('while rows are written, a growing table is analysed between full passes', async (t) => {
  // Only the checks made while rows are written can analyse the table.
  const { engine, m } = await maintained(t, 'busy', { busySeconds: 0.2 });
  m.start();
  await engine.pool.query('CREATE TABLE growing (id int PRIMARY KEY)');
  const analysed = async () =>
    (
      await engine.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_user_tables WHERE relname = 'growing' AND last_analyze IS NOT NULL",
      )
    ).rows[0].n === 1;
  const deadline = Date.now() + 10_000;
  for (let i = 0; !(await analysed()) && Date.now() < deadline; i++) {
    await engine.pool.query('INSERT INTO growing SELECT g FROM generate_series($1::int, $1::int + 99) g', [i * 100]);
    await new Promise((r) => setTimeout(r, 50));
  }
  t.ok(await analysed(), 'the table was analysed without a full pass');
});

t.test('GIN pending lists are merged; indexes without one are not touched', async (t) => {
  const d = await openDatabase(`pglite:${path.join(dir, 'gin')}`, { baseDir: '/', pgliteMaintenanceSeconds: 3600 });
  t.teardown(() => d.close());
  await sql`CREATE TABLE docs (id int PRIMARY KEY, tsv tsvector NOT NULL)`.execute(d.db);
  await sql`CREATE INDEX docs_buffered ON docs USING gin (tsv) WITH (fastupdate = on)`.execute(d.db);
  await sql`CREATE INDEX docs_direct ON docs USING gin (tsv) WITH (fastupdate = off)`.execute(d.db);
  await sql`INSERT INTO docs SELECT g, to_tsvector('simple', 'word' || g || ' common') FROM generate_series(1, 3000) g`.execute(
    d.db,
  );
  const run = await d.maintenance!.runOnce();
  const merged = run.merged.find((m) => m.index === 'docs_buffered');
  t.ok(merged && merged.pages > 0, `the buffered index's pending pages are merged (${merged?.pages})`);
  t.notOk(
    run.merged.some((m) => m.index === 'docs_direct'),
    'an index with fastupdate off has no list',
  );
  t.same((await d.maintenance!.runOnce()).merged, [], 'nothing is left pending');
  const hits = await sql<{ n: number }>`SELECT count(*)::int AS n FROM docs WHERE tsv @@ 'word42'::tsquery`.execute(
    d.db,
  );
  t.equal(hits.rows[0].n, 1, 'the merged index still answers');
});

t.test('no pass where none is asked for', async (t) => {
  const d = await openDatabase(`pglite:${path.join(dir, 'off')}`, { baseDir: '/' });
  t.teardown(() => d.close());
  t.equal(d.maintenance, undefined, 'a CLI open (no interval) runs none');
  const zero = await openDatabase(`pglite:${path.join(dir, 'zero')}`, { baseDir: '/', pgliteMaintenanceSeconds: 0 });
  t.teardown(() => zero.close());
  t.equal(zero.maintenance, undefined, 'pgliteMaintenanceSeconds: 0 turns it off');
});
