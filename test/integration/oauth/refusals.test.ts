// What the authorization server and the resource server refuse, driven over plain HTTP like a client
// and a browser-less user agent: wrong PKCE verifier, mismatched or non-https redirects, a token for
// another audience, an expired token, a missing scope (403 insufficient_scope), consent denied, a form
// without its CSRF token, too many failed sign-ins (429), and Client ID Metadata Documents: one that
// works, and ones refused by the SSRF rules, for size and for time. Nothing connects beyond loopback.
import t from 'tap';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import type { Connector, ConnectRequest } from '../../../src/sdk/index.js';
import { createSignInLink, setPassword } from '../../../src/host/auth/passwords.js';
import { userByName } from '../../../src/host/auth/users.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { makeTestTls, startHttpsServer } from '../../fixtures/transfer/tls-fixture.js';
import {
  authorizeOverHttp,
  authorizeUrl,
  callbackServer,
  csrfOf,
  FormAgent,
  pkce,
  postForm,
  register,
} from '../../fixtures/oauth/flow.js';

const echo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/families/echo');

const PASSWORD = 'a long and careful password';
// A public-looking address the test DNS gives clients.example.com; the test connector takes it to loopback.
const STAND_IN = '93.184.215.14';

const testTls = makeTestTls();
const connects: ConnectRequest[] = [];
let httpsPort = 0;
const connector: Connector = (req) => {
  connects.push(req);
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

t.test('refusals', async (t) => {
  const cb = await callbackServer();
  const docs = await startHttpsServer(testTls, {
    '/client.json': (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          client_id: 'https://clients.example.com/client.json',
          client_name: 'Metadata Doc Client',
          redirect_uris: [cb.url],
          token_endpoint_auth_method: 'none',
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          application_type: 'native',
        }),
      ),
    '/big.json': (_req, res) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ client_id: 'https://clients.example.com/big.json', padding: 'x'.repeat(20_000) })),
    '/slow.json': () => undefined, // never answers
  });
  httpsPort = docs.port;
  const server = await startTestServer({
    loopbackPublicUrl: true,
    builtinDir: null,
    config: {
      plugins: [echo],
      oauth: {
        clientMetadataTimeoutMs: 400,
        clientMetadataMaxBytes: 4096,
        signInFailures: 3,
        signInWindowSeconds: 60,
        registrationsPerHour: 8,
      },
    },
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
  const reg = await register(base, {
    client_name: 'Negative Client',
    redirect_uris: [cb.url],
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
  });
  const clientId = reg.body.client_id as string;
  const mcp = (token: string, body: unknown) =>
    fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(body),
    });
  const agent = new FormAgent();
  const codeFor = async (o: { scopes?: string[]; decision?: 'allow' | 'deny'; redirectUri?: string } = {}) => {
    const p = pkce();
    const url = await authorizeOverHttp(
      agent,
      base,
      authorizeUrl(base, { clientId, redirectUri: o.redirectUri ?? cb.url, challenge: p.challenge }),
      { user: 'operator', password: PASSWORD, scopes: o.scopes, decision: o.decision },
    );
    return { url, verifier: p.verifier, code: url.searchParams.get('code') ?? '' };
  };

  t.test('PKCE: a wrong code_verifier gets no token', async (t) => {
    const { code } = await codeFor();
    const r = await postForm(`${base}/token`, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: cb.url,
      client_id: clientId,
      code_verifier: pkce().verifier,
    });
    t.equal(r.status, 400);
    t.equal(r.body.error, 'invalid_grant');
  });

  t.test('a replayed authorization code is refused and revokes the grant', async (t) => {
    const { code, verifier } = await codeFor();
    const exchange = () =>
      postForm(`${base}/token`, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: cb.url,
        client_id: clientId,
        code_verifier: verifier,
      });
    const first = await exchange();
    t.equal(first.status, 200);
    const second = await exchange();
    t.equal(second.body.error, 'invalid_grant', 'the second exchange is refused');
    t.equal(
      (await mcp(first.body.access_token, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status,
      401,
      "and the first exchange's token no longer works",
    );
  });

  t.test('PKCE is required: an authorization without code_challenge is refused', async (t) => {
    const res = await fetch(
      `${base}/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: cb.url, scope: 'vault:read', state: 's' })}`,
      { redirect: 'manual' },
    );
    const to = new URL(res.headers.get('location') ?? `${base}/`);
    t.equal(to.origin, cb.origin);
    t.equal(to.searchParams.get('error'), 'invalid_request');
  });

  t.test('redirect URIs: exact match, https only except loopback', async (t) => {
    const { code, verifier } = await codeFor();
    const r = await postForm(`${base}/token`, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: `${cb.url}/other`,
      client_id: clientId,
      code_verifier: verifier,
    });
    t.equal(r.body.error, 'invalid_grant', 'a token request with another redirect_uri is refused');
    const p = pkce();
    const unregistered = await fetch(
      authorizeUrl(base, { clientId, redirectUri: `${cb.origin}/elsewhere`, challenge: p.challenge }),
      { redirect: 'manual' },
    );
    t.equal(unregistered.status, 400, 'an unregistered redirect_uri is refused on the page, never redirected to');
    t.equal(unregistered.headers.get('location'), null);
    const http = await register(base, {
      client_name: 'Plain http',
      redirect_uris: ['http://connector.example.org/cb'],
      token_endpoint_auth_method: 'none',
    });
    const plain = await fetch(
      authorizeUrl(base, {
        clientId: http.body.client_id ?? 'none',
        redirectUri: 'http://connector.example.org/cb',
        challenge: p.challenge,
      }),
      { redirect: 'manual' },
    );
    t.equal(plain.status, 400, 'a plain http redirect off loopback is refused');
    t.equal(plain.headers.get('location'), null);
  });

  t.test('the redirect URIs claude.ai and ChatGPT register reach the sign-in page', async (t) => {
    const uris = [
      'https://claude.ai/api/mcp/auth_callback',
      'https://claude.com/api/mcp/auth_callback',
      'https://chatgpt.com/connector/oauth/AbC123xyz',
      'https://chatgpt.com/connector_platform_oauth_redirect',
    ];
    const r = await register(base, {
      client_name: 'Connector',
      redirect_uris: uris,
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
    t.equal(r.status, 201, r.status === 201 ? 'answered 201' : JSON.stringify(r.body));
    for (const uri of uris) {
      const page = await new FormAgent().follow(
        authorizeUrl(base, { clientId: r.body.client_id, redirectUri: uri, challenge: pkce().challenge }),
        base,
      );
      t.equal(page.status, 200, uri);
      t.match(page.html, /name="password"/, `${uri}: the sign-in page`);
    }
  });

  t.test('tokens for another audience, expired tokens, and missing scopes are refused', async (t) => {
    const { code, verifier } = await codeFor({ scopes: ['vault:read'] });
    const tok = await postForm(`${base}/token`, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: cb.url,
      client_id: clientId,
      code_verifier: verifier,
    });
    t.equal(tok.status, 200);
    const list = await mcp(tok.body.access_token, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    t.equal(list.status, 200, 'the read token lists tools');
    const write = await mcp(tok.body.access_token, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'append_note', arguments: { path: 'x.md', text: 'x' } },
    });
    t.equal(write.status, 403, 'a write tool without vault:write answers 403');
    t.match(
      write.headers.get('www-authenticate'),
      /^Bearer error="insufficient_scope", resource_metadata="[^"]+", scope="vault:read vault:write"/,
    );
    t.match(((await write.json()) as any).error.data.refusal, {
      code: 'insufficient_scope',
      scope: 'vault:read vault:write',
    });

    const provider = server.host.oauth!.provider;
    const at = await provider.AccessToken.find(tok.body.access_token);
    const foreign = new provider.AccessToken({
      accountId: 'operator',
      clientId,
      grantId: at!.grantId,
      scope: 'vault:read',
      aud: 'https://other.example.org/mcp',
    } as never);
    const foreignValue = await foreign.save();
    const other = await mcp(foreignValue, { jsonrpc: '2.0', id: 3, method: 'tools/list' });
    t.equal(other.status, 401, 'a token minted for another resource is refused');
    t.match(((await other.json()) as any).error.message, /not issued for/);

    await db
      .updateTable('oauth_records')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('model', '=', 'AccessToken')
      .where('id', '=', tok.body.access_token)
      .execute();
    const expired = await mcp(tok.body.access_token, { jsonrpc: '2.0', id: 4, method: 'tools/list' });
    t.equal(expired.status, 401, 'an expired token is refused');
    t.match(expired.headers.get('www-authenticate'), /error="invalid_token"/);
    await server.host.oauth!.sweep();
    const left = await db
      .selectFrom('oauth_records')
      .select('id')
      .where('model', '=', 'AccessToken')
      .where('id', '=', tok.body.access_token)
      .execute();
    t.equal(left.length, 0, 'the sweep removed the expired row');
  });

  t.test('consent denied sends the client access_denied', async (t) => {
    const { url, code } = await codeFor({ decision: 'deny' });
    t.equal(code, '');
    t.equal(url.searchParams.get('error'), 'access_denied');
    t.equal(url.searchParams.get('iss'), base);
  });

  t.test('a form without its CSRF token is refused', async (t) => {
    const fresh = new FormAgent();
    const p = pkce();
    const page = await fresh.follow(
      authorizeUrl(base, { clientId, redirectUri: cb.url, challenge: p.challenge }),
      base,
    );
    t.match(page.html, /name="password"/);
    t.match(
      page.headers.get('content-security-policy'),
      /default-src 'none'; style-src 'nonce-[^']+'; form-action 'self' http:\/\/127\.0\.0\.1:\d+; frame-ancestors 'none'/,
    );
    const r = await fresh.request(`${page.url}/sign-in`, { form: { user: 'operator', password: PASSWORD } });
    t.equal(r.status, 403);
    const forged = await fresh.request(`${page.url}/sign-in`, {
      form: { csrf: csrfOf(page.html).slice(1) + 'A', user: 'operator', password: PASSWORD },
    });
    t.equal(forged.status, 403, 'a wrong token is refused too');
  });

  t.test('Client ID Metadata Documents: fetched through the SSRF rules, with size and time limits', async (t) => {
    const p = pkce();
    const before = connects.length;
    for (const id of [
      'https://127.0.0.1/client.json',
      'https://[::1]/client.json',
      'https://10.0.0.7/client.json',
      'https://localhost/client.json',
      'https://169.254.169.254/latest/meta-data',
    ]) {
      const r = await fetch(authorizeUrl(base, { clientId: id, redirectUri: cb.url, challenge: p.challenge }), {
        redirect: 'manual',
      });
      t.equal(r.status, 400, `${id} is refused`);
      t.match(await r.text(), /invalid_client/);
    }
    t.equal(connects.length, before, 'no refused metadata URL reached the connector');
    const big = await fetch(
      authorizeUrl(base, {
        clientId: 'https://clients.example.com/big.json',
        redirectUri: cb.url,
        challenge: p.challenge,
      }),
      { redirect: 'manual' },
    );
    t.equal(big.status, 400, 'a document over oauth.clientMetadataMaxBytes is refused');
    const started = Date.now();
    const slow = await fetch(
      authorizeUrl(base, {
        clientId: 'https://clients.example.com/slow.json',
        redirectUri: cb.url,
        challenge: p.challenge,
      }),
      { redirect: 'manual' },
    );
    t.equal(slow.status, 400, 'a document slower than oauth.clientMetadataTimeoutMs is refused');
    t.ok(Date.now() - started < 5000, 'the slow fetch gave up at its deadline');

    // The working document, signed in with a one-time code (exocortex users login-link).
    const { token } = await createSignInLink(db, (await userByName(db, 'operator'))!.id, 600);
    let consent = '';
    const docClient = 'https://clients.example.com/client.json';
    const url = await authorizeOverHttp(
      new FormAgent(),
      base,
      authorizeUrl(base, { clientId: docClient, redirectUri: cb.url, challenge: p.challenge }),
      { user: 'operator', code: token, onConsent: (html) => (consent = html) },
    );
    t.match(consent, /Metadata Doc Client/, 'consent names the client from its document');
    t.match(consent, /client metadata document/, 'and says how it registered');
    const tok = await postForm(`${base}/token`, {
      grant_type: 'authorization_code',
      code: url.searchParams.get('code') ?? '',
      redirect_uri: cb.url,
      client_id: docClient,
      code_verifier: p.verifier,
    });
    t.equal(tok.status, 200, tok.status === 200 ? 'answered 200' : JSON.stringify(tok.body));
    t.equal(
      (await mcp(tok.body.access_token, { jsonrpc: '2.0', id: 1, method: 'tools/list' })).status,
      200,
      'its token works',
    );
    t.ok(
      connects.every((c) => c.address === STAND_IN && c.servername === 'clients.example.com'),
      'every fetch went to the vetted address',
    );
    const reuse = await authorizeOverHttp(
      new FormAgent(),
      base,
      authorizeUrl(base, { clientId: docClient, redirectUri: cb.url, challenge: p.challenge }),
      { user: 'operator', code: token },
    ).catch((e: Error) => e);
    t.ok(reuse instanceof Error && /sign-in answered 401/.test(reuse.message), 'a one-time code works once');
  });

  t.test('failed sign-ins are budgeted per address: 429 with Retry-After', async (t) => {
    const fresh = new FormAgent();
    const p = pkce();
    const page = await fresh.follow(
      authorizeUrl(base, { clientId, redirectUri: cb.url, challenge: p.challenge }),
      base,
    );
    const statuses: number[] = [];
    let last: Awaited<ReturnType<FormAgent['request']>> | undefined;
    for (let i = 0; i < 4; i++) {
      last = await fresh.request(`${page.url}/sign-in`, {
        form: { csrf: csrfOf(page.html), user: 'operator', password: 'wrong' },
      });
      statuses.push(last.status);
    }
    // oauth.signInFailures is 3 for this server; the one-time code replayed above already spent one.
    t.same(statuses, [401, 401, 429, 429], 'wrong passwords answer 401 until the budget is spent, then 429');
    t.ok(Number(last!.headers.get('retry-after')) > 0, 'the 429 says when to retry');
    const right = await fresh.request(`${page.url}/sign-in`, {
      form: { csrf: csrfOf(page.html), user: 'operator', password: PASSWORD },
    });
    t.equal(right.status, 429, 'even the right password waits out the budget');
  });

  t.test('dynamic registration is budgeted per address: 429 with Retry-After', async (t) => {
    let answer: Response | undefined;
    for (let i = 0; i < 10 && answer?.status !== 429; i++) {
      answer = await fetch(`${base}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          client_name: `Flood ${i}`,
          redirect_uris: [cb.url],
          token_endpoint_auth_method: 'none',
        }),
      });
    }
    t.equal(answer?.status, 429, 'registrations past oauth.registrationsPerHour are refused');
    t.ok(Number(answer?.headers.get('retry-after')) > 0, 'with Retry-After');
    t.match(await answer?.text(), /registrationsPerHour/);
  });
});
