// Finishing a consent after the user was disabled (`exocortex users disable`) is a typed refusal — a 403
// page that says the account is disabled, and no code for the client — never a 500 (issue 35). Loopback only.
import t from 'tap';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { usersAddOp, usersDisableOp } from '../../../src/host/admin/account-operations.js';
import { usersPasswdOp } from '../../../src/host/admin/oauth-operations.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { authorizeUrl, callbackServer, csrfOf, FormAgent, pkce, register } from '../../fixtures/oauth/flow.js';

const echo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/families/echo');

t.test('consent after users disable', async (t) => {
  const cb = await callbackServer();
  t.teardown(() => cb.close());
  const server = await startTestServer({ loopbackPublicUrl: true, builtinDir: null, config: { plugins: [echo] } });
  t.teardown(() => server.close());
  const base = server.url;
  await usersAddOp(server.host.operations, { name: 'dora', vault: server.host.vaultHandle.name, share: true });
  await usersPasswdOp(server.host.operations, { name: 'dora', password: 'dora-password-12' });
  const reg = await register(base, { client_name: 'C', redirect_uris: [cb.url], token_endpoint_auth_method: 'none' });
  const agent = new FormAgent();
  const page = await agent.follow(
    authorizeUrl(base, { clientId: reg.body.client_id, redirectUri: cb.url, challenge: pkce().challenge }),
    base,
  );
  const signed = await agent.request(`${page.url}/sign-in`, {
    form: { csrf: csrfOf(page.html), user: 'dora', password: 'dora-password-12' },
  });
  t.equal(signed.status, 303);
  const consent = await agent.follow(signed.location!, base);
  t.match(consent.html, /value="allow"/, 'the consent page');
  await usersDisableOp(server.host.operations, 'dora');
  const r = await agent.request(`${consent.url}/consent`, {
    form: { csrf: csrfOf(consent.html), decision: 'allow', scope: ['vault:read'] },
  });
  let end = r;
  if (r.status === 303 && r.location && new URL(r.location).origin === base) end = await agent.follow(r.location, base);
  t.ok(end.status >= 400 && end.status < 500, `a 4xx refusal (got ${end.status})`);
  t.not(end.status, 500);
  t.match(end.html, /disabled/i, 'the page says the account is disabled');
  const to = end.location ? new URL(end.location) : undefined;
  t.notOk(to?.searchParams.get('code'), 'no code reached the client');
});
