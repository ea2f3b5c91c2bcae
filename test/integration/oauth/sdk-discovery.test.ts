// The "done when": the MCP SDK's own OAuth client provider connects to a freshly started server
// through discovery alone — 401 → protected resource metadata → authorization server metadata → DCR →
// PKCE authorization (signed in and consented by a browser-less user agent) → token → tool calls. No key
// is copied by hand. Also: API keys keep working beside OAuth on the same server.
import t from 'tap';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Client,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  type OAuthClientProvider,
} from '@modelcontextprotocol/client';
import { setPassword } from '../../../src/host/auth/passwords.js';
import { userByName } from '../../../src/host/auth/users.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { authorizeOverHttp, callbackServer, FormAgent } from '../../fixtures/oauth/flow.js';

const echo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/families/echo');

const PASSWORD = 'discovery only, no keys';

type Provider = OAuthClientProvider & {
  authorizationUrl?: URL;
  saved: { tokens?: any; client?: any; verifier?: string };
};

function memoryProvider(redirectUrl: string): Provider {
  const saved: Provider['saved'] = {};
  const p: Provider = {
    saved,
    get redirectUrl() {
      return redirectUrl;
    },
    get clientMetadata() {
      return {
        client_name: 'SDK OAuth Provider',
        redirect_uris: [redirectUrl],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      };
    },
    clientInformation: () => saved.client,
    saveClientInformation: (info) => void (saved.client = info),
    tokens: () => saved.tokens,
    saveTokens: (tokens) => void (saved.tokens = tokens),
    redirectToAuthorization: (url) => void (p.authorizationUrl = url),
    saveCodeVerifier: (v) => void (saved.verifier = v),
    codeVerifier: () => saved.verifier!,
  };
  return p;
}

t.test('the SDK client OAuth provider connects through discovery alone', async (t) => {
  const server = await startTestServer({ builtinDir: null, loopbackPublicUrl: true, config: { plugins: [echo] } });
  const cb = await callbackServer();
  t.teardown(async () => {
    await cb.close();
    await server.close();
  });
  const db = server.host.database.db;
  await setPassword(db, (await userByName(db, 'operator'))!.id, PASSWORD);
  const mcpUrl = new URL(`${server.url}/mcp`);
  const provider = memoryProvider(cb.url);

  const first = new Client({ name: 'sdk-oauth', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
  const refused = await first.connect(transport).then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(refused instanceof UnauthorizedError, 'the first connect needs authorization');
  t.ok(provider.saved.client?.client_id, 'the SDK registered itself by DCR');
  const authUrl = provider.authorizationUrl!;
  t.equal(
    authUrl.origin + authUrl.pathname,
    `${server.url}/authorize`,
    'it found the authorization endpoint by discovery',
  );
  t.equal(authUrl.searchParams.get('code_challenge_method'), 'S256');
  t.equal(authUrl.searchParams.get('resource'), mcpUrl.href, 'it asks for this resource (RFC 8707)');

  const back = await authorizeOverHttp(new FormAgent(), server.url, authUrl.href, {
    user: 'operator',
    password: PASSWORD,
    scopes: ['vault:read', 'vault:write'],
  });
  await transport.finishAuth(back.searchParams);
  t.ok(provider.saved.tokens?.access_token, 'the SDK exchanged the code');

  const client = new Client({ name: 'sdk-oauth', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
  const tools = await client.listTools();
  t.ok(
    tools.tools.some((x) => x.name === 'append_note'),
    'the consented write scope lists write tools',
  );
  const read = await client.callTool({ name: 'echo', arguments: { text: 'found by discovery' } });
  t.match(JSON.stringify(read.content), /found by discovery/);
  await client.close();

  // API keys keep working on the same server, next to OAuth.
  const keyed = await server.connect();
  t.ok((await keyed.listTools()).tools.length > 0, 'an API key still connects');
});
