// The PGlite thread's statement profile (EXOCORTEX_PGLITE_PROFILE) charges each request to the statement it
// carries: a transaction's `begin` to the statement that travels with it, a prepared statement's Bind to the text its
// earlier Parse named; and it writes the totals where it was told.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { serialize } from 'pg-protocol';
import { StatementProfile } from '../../../src/host/db/engines/pglite-profile.js';

const bundle = (...messages: Uint8Array[]) => Buffer.concat(messages);

t.test('each request is charged to the statement it carries', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-pglite-profile-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'statements.json');
  const profile = new StatementProfile(file);
  // CPU the thread's clock sees, however loaded the machine: until its own count has moved 8 ms.
  const cpu = () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  const spin = async () => {
    const until = cpu() + 8;
    while (cpu() < until);
  };
  const insert = 'INSERT INTO t\n  SELECT *   FROM r';
  const prepared = bundle(
    serialize.query('begin'),
    serialize.parse({ name: 'exo_1', text: insert, types: [] }),
    serialize.bind({ statement: 'exo_1', values: [] }),
    serialize.execute({}),
    serialize.sync(),
  );
  await profile.measure(prepared, spin);
  // The same statement again, bound only: still its text, not its name.
  await profile.measure(
    bundle(serialize.bind({ statement: 'exo_1', values: [] }), serialize.execute({}), serialize.sync()),
    spin,
  );
  await profile.measure(bundle(serialize.query('SELECT 1')), async () => undefined);
  await profile.measure(bundle(serialize.sync()), async () => undefined);
  const totals = profile.totals();
  t.same(
    totals.map((c) => [c.text, c.calls]),
    [['INSERT INTO t SELECT * FROM r', 2], ...totals.slice(1).map((c) => [c.text, c.calls])],
    'the costliest first: the prepared insert, begin and Bind alike',
  );
  t.same(
    totals.map((c) => c.text).sort(),
    ['(other messages)', 'INSERT INTO t SELECT * FROM r', 'SELECT 1'],
    'a simple query by its text, a request carrying no statement as such',
  );
  t.ok(totals[0].cpuMs >= 16, `the insert's CPU was counted (${totals[0].cpuMs.toFixed(1)} ms)`);
  // A failure is charged too, and goes on to the caller.
  await t.rejects(
    profile.measure(bundle(serialize.query('SELECT 1')), async () => Promise.reject(new Error('boom'))),
    /boom/,
  );
  t.equal(profile.totals().find((c) => c.text === 'SELECT 1')?.calls, 2);
  profile.stop();
  t.same(JSON.parse(readFileSync(file, 'utf8')), profile.totals(), 'stop() writes the totals to the file');
});
