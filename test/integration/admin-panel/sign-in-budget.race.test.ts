// The sign-in budget under a race (issue 35): 200 parallel POST /admin/sign-in from one address with one
// CSRF token — 199 wrong passwords, then the right one while they are still in flight — check at most
// oauth.signInFailures passwords, and the right one is refused. The panel and the OAuth sign-in page
// spend one budget (one row per address in auth_attempt_budgets), and client registrations are budgeted
// in the same table. Loopback only.
import t from 'tap';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { usersPasswdOp } from '../../../src/host/admin/oauth-operations.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { authorizeUrl, callbackServer, csrfOf, FormAgent, pkce, register } from '../../fixtures/oauth/flow.js';

const echo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/families/echo');
const PASSWORD = 'operator-password-1';
const BUDGET = 5;

t.test('one sign-in budget, atomic under concurrency', async (t) => {
  const cb = await callbackServer();
  const server = await startTestServer({
    loopbackPublicUrl: true,
    builtinDir: null,
    config: { plugins: [echo], oauth: { signInFailures: BUDGET, signInWindowSeconds: 900, registrationsPerHour: 50 } },
  });
  t.teardown(async () => {
    await server.close();
    await cb.close();
  });
  const base = server.url;
  const db = server.host.database.db;
  await usersPasswdOp(server.host.operations, { name: 'operator', password: PASSWORD });

  // One browser's CSRF cookie and token, reused by every post (as a scripted attacker would).
  const page = await fetch(`${base}/admin/sign-in`);
  const cookie = page.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1];
  const post = (password: string) =>
    fetch(`${base}/admin/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, user: 'operator', password, next: '/admin/' }).toString(),
    });

  t.test('200 parallel panel sign-ins check at most the budget; the right password last is refused', async (t) => {
    let answered401 = 0;
    let budgetSpent!: () => void;
    const spent = new Promise<void>((r) => (budgetSpent = r));
    const wrong = Array.from({ length: 199 }, (_, i) =>
      post(`wrong password ${i}`).then(async (r) => {
        await r.arrayBuffer();
        if (r.status === 401 && ++answered401 >= BUDGET) budgetSpent();
        return r.status;
      }),
    );
    // Sent while most wrong ones are still in flight, once the budget's worth of them has been answered
    // (so the test does not depend on which request the server happens to take first).
    const right = Promise.race([spent, Promise.all(wrong)]).then(() => post(PASSWORD));
    const statuses = await Promise.all(wrong);
    const last = await right;
    const counts: Record<number, number> = {};
    for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
    t.ok((counts[401] ?? 0) <= BUDGET, `at most ${BUDGET} passwords were checked and failed (got ${counts[401] ?? 0})`);
    t.equal(
      (counts[401] ?? 0) + (counts[429] ?? 0),
      199,
      `every other attempt answered 429 (${JSON.stringify(counts)})`,
    );
    t.equal(last.status, 429, 'the right password, sent last, is refused: the budget is spent');
    t.ok(Number(last.headers.get('retry-after')) > 0, 'with Retry-After');
    t.equal(last.headers.get('location'), null, 'no session was made');
    const row = await db
      .selectFrom('auth_attempt_budgets')
      .select(['attempts'])
      .where('bucket', '=', 'sign-in')
      .where('key', '=', '127.0.0.1')
      .executeTakeFirstOrThrow();
    t.equal(Number(row.attempts), 200, 'every attempt was counted in the database row, refused ones included');
  });

  t.test('the OAuth sign-in page spends the same budget', async (t) => {
    const reg = await register(base, {
      client_name: 'Budget client',
      redirect_uris: [cb.url],
      token_endpoint_auth_method: 'none',
    });
    t.equal(reg.status, 201);
    const agent = new FormAgent();
    const signIn = await agent.follow(
      authorizeUrl(base, { clientId: reg.body.client_id, redirectUri: cb.url, challenge: pkce().challenge }),
      base,
    );
    t.match(signIn.html, /name="password"/);
    const r = await agent.request(`${signIn.url}/sign-in`, {
      form: { csrf: csrfOf(signIn.html), user: 'operator', password: PASSWORD },
    });
    t.equal(r.status, 429, 'the right password is refused on the OAuth page too: the panel spent the budget');
    const reg2 = await db
      .selectFrom('auth_attempt_budgets')
      .select(['attempts'])
      .where('bucket', '=', 'oauth-register')
      .where('key', '=', '127.0.0.1')
      .executeTakeFirstOrThrow();
    t.equal(Number(reg2.attempts), 1, 'and client registrations are counted in the same table');
  });

  t.test('a new window starts from the database clock; a right password does not spend the budget', async (t) => {
    await db
      .updateTable('auth_attempt_budgets')
      .set({ resets_at: new Date(Date.now() - 1000) })
      .where('bucket', '=', 'sign-in')
      .execute();
    for (let i = 0; i < BUDGET + 2; i++) {
      const r = await post(PASSWORD);
      t.equal(r.status, 303, `right password ${i + 1} signs in once the window has passed`);
    }
    const wrong = [];
    for (let i = 0; i < BUDGET + 1; i++) wrong.push((await post('still wrong')).status);
    t.same(wrong, [...Array(BUDGET).fill(401), 429], 'successes gave their attempt back; failures still count');
  });
});
