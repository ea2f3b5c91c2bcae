// The redirect policy holds for every redirect URI a client could receive a code at, not only the
// `redirect_uri` query parameter (issue 35): Dynamic Client Registration and Client ID Metadata
// Documents refuse redirect URIs outside it, a stored client registered before the policy (or before
// the operator narrowed it) is refused at /authorize even when redirect_uri is left out, and the
// default (empty) allowlist still refuses plain http off loopback, credentials and 0.0.0.0.
// attacker.example and evil.example appear only inside redirect URIs, which nothing here ever dials;
// the metadata documents are served on loopback through a connector that refuses any other address.
import t from 'tap';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import type { Connector } from '../../../src/sdk/index.js';
import { setPassword } from '../../../src/host/auth/passwords.js';
import { userByName } from '../../../src/host/auth/users.js';
import { KyselyOAuthAdapter } from '../../../src/host/oauth/adapter.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { makeTestTls, startHttpsServer } from '../../fixtures/transfer/tls-fixture.js';
import { authorizeOverHttp, callbackServer, FormAgent, pkce, postForm, register } from '../../fixtures/oauth/flow.js';

const echo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/families/echo');
const PASSWORD = 'a long and careful password';
// The test resolver gives clients.example.com this public-looking address; the connector takes it to loopback.
const STAND_IN = '93.184.215.14';

const HOSTILE = [
  'https://attacker.example/cb',
  'http://attacker.example/cb',
  'https://u:p@evil.example/cb',
  'http://0.0.0.0/cb',
  'https://0.0.0.0/cb',
  'https://[::]/cb',
];

const testTls = makeTestTls();
let httpsPort = 0;
const connector: Connector = (req) => {
  if (req.address !== STAND_IN) return Promise.reject(new Error(`test guard: refused to connect to ${req.address}`));
  return new Promise<Duplex>((resolve, reject) => {
    const socket = tls.connect({
      host: '127.0.0.1',
      port: httpsPort,
      servername: req.servername,
      ca: testTls.ca,
      ALPNProtocols: ['http/1.1'],
    });
    socket.once('secureConnect', () => resolve(socket));
    socket.once('error', reject);
  });
};

/** The /authorize query a client sends when it leaves redirect_uri out (the provider picks the registered one). */
function authorizeWithoutRedirect(base: string, clientId: string): string {
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    code_challenge: pkce().challenge,
    code_challenge_method: 'S256',
    scope: 'vault:read vault:write',
    resource: `${base}/mcp`,
    state: 'st',
  });
  return `${base}/authorize?${q}`;
}

const doc = (id: string, redirect: string) => ({
  client_id: `https://clients.example.com/${id}.json`,
  client_name: `Doc ${id}`,
  redirect_uris: [redirect],
  token_endpoint_auth_method: 'none',
  grant_types: ['authorization_code'],
  response_types: ['code'],
});

t.test('with oauth.allowedRedirectHosts: [claude.ai]', async (t) => {
  const cb = await callbackServer();
  const docs = await startHttpsServer(testTls, {
    '/hostile.json': (_req, res) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(doc('hostile', 'https://attacker.example/cb'))),
    '/plain.json': (_req, res) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(doc('plain', 'http://attacker.example/cb'))),
  });
  httpsPort = docs.port;
  const server = await startTestServer({
    loopbackPublicUrl: true,
    builtinDir: null,
    config: { plugins: [echo], oauth: { allowedRedirectHosts: ['claude.ai'], registrationsPerHour: 100 } },
    oauthFetchSeams: {
      resolver: async (name) =>
        name === 'clients.example.com'
          ? [{ address: STAND_IN, family: 4 }]
          : Promise.reject(Object.assign(new Error('no such name'), { code: 'ENOTFOUND' })),
      connector,
    },
  });
  t.teardown(async () => {
    await server.close();
    await docs.close();
    await cb.close();
  });
  const base = server.url;
  const db = server.host.database.db;
  await setPassword(db, (await userByName(db, 'operator'))!.id, PASSWORD);

  t.test('DCR refuses redirect URIs outside the policy (invalid_redirect_uri)', async (t) => {
    for (const uri of HOSTILE) {
      const r = await register(base, {
        client_name: 'Hostile',
        redirect_uris: [uri],
        token_endpoint_auth_method: 'none',
      });
      t.equal(r.status, 400, `${uri} is refused at registration`);
      t.equal(r.body.error, 'invalid_redirect_uri', uri);
      t.equal(r.body.client_id, undefined, `${uri}: no client is made`);
    }
    const mixed = await register(base, {
      client_name: 'Mixed',
      redirect_uris: ['https://claude.ai/api/mcp/auth_callback', 'https://attacker.example/cb'],
      token_endpoint_auth_method: 'none',
    });
    t.equal(mixed.status, 400, 'one bad URI among good ones refuses the whole registration');
    const ok = await register(base, {
      client_name: 'Claude',
      redirect_uris: ['https://claude.ai/api/mcp/auth_callback', cb.url],
      token_endpoint_auth_method: 'none',
    });
    t.equal(ok.status, 201, 'the allowed host and a loopback callback register');
  });

  t.test('a stored client outside the policy gets no code when /authorize omits redirect_uri', async (t) => {
    // As if registered before this fix, or before the operator narrowed oauth.allowedRedirectHosts.
    const clientId = 'legacy-hostile-client';
    await new KyselyOAuthAdapter(db, 'Client').upsert(clientId, {
      client_id: clientId,
      client_id_issued_at: Math.floor(Date.now() / 1000),
      client_name: 'Legacy',
      redirect_uris: ['https://attacker.example/cb'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
      response_types: ['code'],
    });
    const r = await fetch(authorizeWithoutRedirect(base, clientId), { redirect: 'manual' });
    t.equal(r.status, 400, 'refused on the page');
    t.equal(r.headers.get('location'), null, 'never redirected anywhere');
    t.match(await r.text(), /redirect_uri/);
    const walk = await authorizeOverHttp(new FormAgent(), base, authorizeWithoutRedirect(base, clientId), {
      user: 'operator',
      password: PASSWORD,
      scopes: ['vault:read', 'vault:write'],
    }).catch((e: Error) => e);
    t.ok(walk instanceof Error && /authorize stopped at .*\(400\)/.test(walk.message), 'no sign-in or consent page');
  });

  t.test('Client ID Metadata Documents with redirect URIs outside the policy are refused', async (t) => {
    const redirectOf: Record<string, string> = {
      hostile: 'https://attacker.example/cb',
      plain: 'http://attacker.example/cb',
    };
    for (const id of ['hostile', 'plain']) {
      const clientId = `https://clients.example.com/${id}.json`;
      const without = await fetch(authorizeWithoutRedirect(base, clientId), { redirect: 'manual' });
      t.equal(without.status, 400, `${id}: refused without redirect_uri`);
      t.equal(without.headers.get('location'), null, `${id}: not redirected`);
      t.match(await without.text(), /redirect_uri/);
      const q = new URL(authorizeWithoutRedirect(base, clientId));
      q.searchParams.set('redirect_uri', redirectOf[id]);
      const withIt = await fetch(q, { redirect: 'manual' });
      t.equal(withIt.status, 400, `${id}: refused with redirect_uri too`);
      t.equal(withIt.headers.get('location'), null);
    }
  });

  t.test('a loopback client that omits redirect_uri still completes the flow', async (t) => {
    const reg = await register(base, {
      client_name: 'Native',
      redirect_uris: [cb.url],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
      response_types: ['code'],
    });
    t.equal(reg.status, 201);
    const p = pkce();
    const url = new URL(authorizeWithoutRedirect(base, reg.body.client_id));
    url.searchParams.set('code_challenge', p.challenge);
    const to = await authorizeOverHttp(new FormAgent(), base, url.href, { user: 'operator', password: PASSWORD });
    t.equal(`${to.origin}${to.pathname}`, cb.url, 'the code goes to the registered loopback callback');
    const tok = await postForm(`${base}/token`, {
      grant_type: 'authorization_code',
      code: to.searchParams.get('code') ?? '',
      client_id: reg.body.client_id,
      code_verifier: p.verifier,
    });
    t.equal(tok.status, 200, 'and exchanges for a token');
  });
});

t.test('with the default (empty) allowlist', async (t) => {
  const server = await startTestServer({
    loopbackPublicUrl: true,
    builtinDir: null,
    config: { plugins: [echo], oauth: { registrationsPerHour: 100 } },
  });
  t.teardown(() => server.close());
  const base = server.url;
  for (const uri of HOSTILE.filter((u) => u !== 'https://attacker.example/cb')) {
    const r = await register(base, {
      client_name: 'Hostile',
      redirect_uris: [uri],
      token_endpoint_auth_method: 'none',
    });
    t.equal(r.status, 400, `${uri} is refused at registration`);
    t.equal(r.body.error, 'invalid_redirect_uri', uri);
  }
  const https = await register(base, {
    client_name: 'Any https host',
    redirect_uris: ['https://attacker.example/cb', 'http://127.0.0.1:61234/cb', 'http://[::1]:8080/cb'],
    token_endpoint_auth_method: 'none',
  });
  t.equal(https.status, 201, 'any https host and loopback http register while the allowlist is empty');
});
