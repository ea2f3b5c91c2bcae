// The OAuth browser flow end to end, as claude.ai or ChatGPT would drive it: register by DCR, open
// /authorize with PKCE and resource in headless Chromium, sign in, consent, follow the redirect to a
// loopback callback, exchange the code, call tools with the access token through the MCP SDK client,
// refresh, replay the old refresh token (the grant is revoked), revoke. Skips without Chromium.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { setPassword } from '../../../src/host/auth/passwords.js';
import { userByName } from '../../../src/host/auth/users.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import {
  authorizeUrl,
  callbackServer,
  chromiumMissing,
  launchBrowser,
  pkce,
  postForm,
  register,
  signInAndConsent,
} from '../../fixtures/oauth/flow.js';

const echo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/families/echo');

const PASSWORD = 'correct horse battery staple';

t.test(
  'DCR, sign-in, consent, code exchange, tool calls, refresh rotation, reuse detection, revocation',
  { skip: chromiumMissing },
  async (t) => {
    // The echo test family (a read tool and a write tool) keeps the start short; the built-in families are
    // the same code path (test/security/vault-isolation.every-tool.test.ts covers them per principal).
    const server = await startTestServer({ builtinDir: null, loopbackPublicUrl: true, config: { plugins: [echo] } });
    const base = server.url;
    const db = server.host.database.db;
    await setPassword(db, (await userByName(db, 'operator'))!.id, PASSWORD);
    const cb = await callbackServer();
    const browser = await launchBrowser(() => [base, cb.origin]);
    t.teardown(async () => {
      await browser.close();
      await cb.close();
      await server.close();
    });

    // Discovery, as a client starts: the 401 names the resource metadata, which names the issuer.
    const unauth = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    });
    t.equal(unauth.status, 401);
    t.equal(
      unauth.headers.get('www-authenticate'),
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="vault:read vault:write"`,
    );
    const prm = (await (await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<string, any>;
    t.same(prm.authorization_servers, [base]);
    t.equal(prm.resource, `${base}/mcp`);
    const asm = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as Record<string, any>;
    t.same(asm.code_challenge_methods_supported, ['S256']);
    t.equal(asm.client_id_metadata_document_supported, true);
    t.equal(asm.authorization_response_iss_parameter_supported, true);
    t.ok(asm.token_endpoint_auth_methods_supported.includes('none'));
    t.ok(asm.scopes_supported.includes('vault:write'));

    const reg = await register(base, {
      client_name: 'Browser Test Client',
      redirect_uris: [cb.url],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
    t.equal(reg.status, 201, 'DCR registers the client');
    const clientId = reg.body.client_id as string;

    const { verifier, challenge } = pkce();
    const page = await browser.context.newPage();
    await page.goto(authorizeUrl(base, { clientId, redirectUri: cb.url, challenge, state: 'state-1' }));
    t.match(await page.textContent('main'), /Browser Test Client/, 'the sign-in page names the client');
    const csp = (await page.context().request.get(page.url())).headers()['content-security-policy'];
    t.match(csp, /default-src 'none'/, 'the pages carry a strict CSP');
    const callback = cb.next();
    await signInAndConsent(page, { user: 'operator', password: PASSWORD, write: true });
    const q = await callback;
    t.equal(q.get('state'), 'state-1');
    t.equal(q.get('iss'), base, 'RFC 9207: the redirect names the issuer');
    const code = q.get('code')!;
    t.ok(code, 'the callback received a code');

    const tok = await postForm(`${base}/token`, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: cb.url,
      client_id: clientId,
      code_verifier: verifier,
      resource: `${base}/mcp`,
    });
    t.equal(tok.status, 200, tok.status === 200 ? 'answered 200' : JSON.stringify(tok.body));
    t.match(tok.body, { token_type: 'Bearer', scope: /vault:write/ });
    t.ok(tok.body.refresh_token, 'a refresh token is issued');
    t.ok(tok.body.expires_in <= 3600 && tok.body.expires_in > 3000, 'the access token lives an hour');

    const connect = async (token: string) => {
      const client = new Client({ name: 'oauth-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      return client;
    };
    const client = await connect(tok.body.access_token);
    const tools = await client.listTools();
    t.ok(
      tools.tools.some((x) => x.name === 'append_note'),
      'a write scope lists the write tools',
    );
    const read = await client.callTool({ name: 'echo', arguments: { text: 'over oauth' } });
    t.notOk(read.isError, 'a read tool works with the access token');
    t.match(JSON.stringify(read.content), /over oauth/);
    const wrote = await client.callTool({
      name: 'append_note',
      arguments: { path: 'From OAuth.md', text: 'made over OAuth\n' },
    });
    t.notOk(wrote.isError, 'a write tool works with vault:write');
    t.equal(
      readFileSync(path.join(server.vaultDir, 'From OAuth.md'), 'utf8'),
      'made over OAuth\n',
      'the note is in the vault',
    );
    await client.close();

    // Refresh rotates the refresh token; replaying the old one revokes the whole grant.
    const refreshed = await postForm(`${base}/token`, {
      grant_type: 'refresh_token',
      refresh_token: tok.body.refresh_token,
      client_id: clientId,
    });
    t.equal(refreshed.status, 200, refreshed.status === 200 ? 'answered 200' : JSON.stringify(refreshed.body));
    t.not(refreshed.body.refresh_token, tok.body.refresh_token, 'the refresh token rotated');
    const again = await connect(refreshed.body.access_token);
    t.ok((await again.listTools()).tools.length > 0, 'the refreshed access token works');
    await again.close();
    const replay = await postForm(`${base}/token`, {
      grant_type: 'refresh_token',
      refresh_token: tok.body.refresh_token,
      client_id: clientId,
    });
    t.equal(replay.status, 400);
    t.equal(replay.body.error, 'invalid_grant', 'a replayed refresh token is refused');
    const afterReplay = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${refreshed.body.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    });
    t.equal(afterReplay.status, 401, 'the replay revoked the grant: its newest access token is refused at once');
    t.match(afterReplay.headers.get('www-authenticate'), /error="invalid_token"/);

    // A second authorization (the browser session is remembered: consent only), then revocation.
    const second = pkce();
    const cb2 = cb.next();
    await page.goto(authorizeUrl(base, { clientId, redirectUri: cb.url, challenge: second.challenge }));
    await signInAndConsent(page, { user: 'operator', password: PASSWORD });
    const code2 = (await cb2).get('code')!;
    const tok2 = await postForm(`${base}/token`, {
      grant_type: 'authorization_code',
      code: code2,
      redirect_uri: cb.url,
      client_id: clientId,
      code_verifier: second.verifier,
    });
    t.equal(tok2.status, 200, tok2.status === 200 ? 'answered 200' : JSON.stringify(tok2.body));
    t.equal(tok2.body.scope.split(' ').includes('vault:write'), false, 'write is opt-in: not ticked, not granted');
    const ro = await connect(tok2.body.access_token);
    t.notOk(
      (await ro.listTools()).tools.some((x) => x.name === 'append_note'),
      'a read-only grant hides write tools',
    );
    await ro.close();
    const revoked = await postForm(`${base}/revoke`, { token: tok2.body.refresh_token, client_id: clientId });
    t.equal(revoked.status, 200, 'revocation answers 200');
    const afterRevoke = await postForm(`${base}/token`, {
      grant_type: 'refresh_token',
      refresh_token: tok2.body.refresh_token,
      client_id: clientId,
    });
    t.equal(afterRevoke.body.error, 'invalid_grant', 'a revoked refresh token is refused');

    t.same(browser.blocked, [], 'the browser asked for nothing outside the loopback origins');
  },
);
