// The sign-in budget is global across server processes that share one PostgreSQL (issue 35, needed by
// #37): two servers over one database, 60 parallel wrong sign-ins to each, check at most
// oauth.signInFailures passwords between them; and the counting statement itself, raced over a pool of
// real connections, lets exactly the budget through. Skips without the PostgreSQL 15 server binaries.
import t from 'tap';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { usersPasswdOp } from '../../../src/host/admin/oauth-operations.js';
import { AttemptBudget } from '../../../src/host/auth/attempt-budget.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { postgresAvailable, startPostgres } from '../../../src/host/testing/postgres-server.js';

const echo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/families/echo');
const BUDGET = 4;

async function panelPoster(base: string) {
  const page = await fetch(`${base}/admin/sign-in`);
  const cookie = page.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1];
  return async (password: string) => {
    const r = await fetch(`${base}/admin/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, user: 'operator', password, next: '/admin/' }).toString(),
    });
    await r.arrayBuffer();
    return r.status;
  };
}

t.test(
  'one sign-in budget across two processes sharing PostgreSQL',
  { skip: postgresAvailable() ? false : 'PostgreSQL 15 server binaries not installed' },
  async (t) => {
    const pg = await startPostgres();
    t.teardown(() => pg.stop());
    const start = (vault?: string) =>
      startTestServer({
        builtinDir: null,
        config: {
          plugins: [echo],
          database: { url: pg.url },
          oauth: { signInFailures: BUDGET, signInWindowSeconds: 900 },
          // Processes sharing one server database serve a vault from one root (a differing root is refused).
          ...(vault ? { vault: { path: vault } } : {}),
        },
      });
    const a = await start();
    t.teardown(() => a.close());
    const b = await start(a.vaultDir);
    t.teardown(() => b.close());
    await usersPasswdOp(a.host.operations, { name: 'operator', password: 'postgres-password-1' });

    const [postA, postB] = await Promise.all([panelPoster(a.url), panelPoster(b.url)]);
    const statuses = await Promise.all(Array.from({ length: 120 }, (_, i) => (i % 2 ? postA : postB)(`wrong ${i}`)));
    const failed = statuses.filter((s) => s === 401).length;
    t.ok(failed <= BUDGET, `at most ${BUDGET} passwords checked across both processes (got ${failed})`);
    t.equal(statuses.filter((s) => s === 429).length, 120 - failed, 'the rest answered 429');
    t.equal(await postA('postgres-password-1'), 429, 'the right password is refused on the first process');
    t.equal(await postB('postgres-password-1'), 429, 'and on the second');

    t.test('the counting statement, raced over real connections, lets exactly the budget through', async (t) => {
      const budget = new AttemptBudget(a.host.database.db, 'race-test', () => ({ limit: 7, windowSeconds: 60 }));
      const other = new AttemptBudget(b.host.database.db, 'race-test', () => ({ limit: 7, windowSeconds: 60 }));
      const spent = await Promise.all(
        Array.from({ length: 200 }, (_, i) => (i % 2 ? budget : other).spend('203.0.113.9')),
      );
      t.equal(spent.filter((s) => s.allowed).length, 7, 'seven allowed');
      t.same(
        spent.map((s) => s.attempts).sort((x, y) => x - y),
        Array.from({ length: 200 }, (_, i) => i + 1),
        'every attempt got its own number: no increment was lost',
      );
      t.ok(
        spent.every((s) => s.allowed || (s.retryAfterSeconds > 0 && s.retryAfterSeconds <= 60)),
        'refusals say when the window resets',
      );
    });
  },
);
