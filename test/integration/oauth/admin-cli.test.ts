// OAuth administration live on a running server: `exocortex users passwd` (stdin) sets the password the
// sign-in page checks, `users login-link` mints a one-time code, `oauth clients|grants list|revoke` show
// and remove what users allowed — and a revoked grant's access token is refused on the very next request.
import t from 'tap';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFile } from 'node:child_process';
import { AdminClient } from '../../../src/host/admin/channel-client.js';
import type { ClientView, GrantView } from '../../../src/host/admin/oauth-operations.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import {
  authorizeOverHttp,
  authorizeUrl,
  callbackServer,
  FormAgent,
  pkce,
  postForm,
  register,
} from '../../fixtures/oauth/flow.js';
import { cliArgs } from '../../../src/host/testing/cli.js';

const echo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/families/echo');

t.test('users passwd, login-link and oauth clients|grants list|revoke, live', async (t) => {
  const server = await startTestServer({ builtinDir: null, loopbackPublicUrl: true, config: { plugins: [echo] } });
  const cb = await callbackServer();
  const admin = (await AdminClient.connect(server.host.admin!.socketPath))!;
  t.teardown(async () => {
    await admin.close();
    await cb.close();
    await server.close();
  });
  const cli = (args: string[], stdin?: string) =>
    new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        // --config before a `--` (after it every word is an argument, as a user types `revoke --config F -- ID`).
        [...cliArgs({ typescriptFamilies: true }), ...withConfigFile(args, server.configFile)],
        { encoding: 'utf8', cwd: process.cwd(), env: { ...process.env, EXO_CONFIG: '' } },
        (err, stdout, stderr) =>
          resolve({ status: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
      child.stdin?.end(stdin ?? '');
    });
  const base = server.url;

  const passwd = await cli(['users', 'passwd', 'operator'], 'set from the CLI stdin\n');
  t.equal(passwd.status, 0, passwd.stderr);
  t.match(passwd.stderr, /set the sign-in password of operator/);
  const short = await admin
    .post('/v1/users/passwd', { name: 'operator', password: 'short' })
    .catch((e: { code: string }) => e);
  t.equal((short as { code: string }).code, 'invalid_arguments', 'a short password is refused');

  const reg = await register(base, {
    client_name: 'Admin Test Client',
    redirect_uris: [cb.url],
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
  });
  const clientId = reg.body.client_id as string;
  const p = pkce();
  const back = await authorizeOverHttp(
    new FormAgent(),
    base,
    authorizeUrl(base, { clientId, redirectUri: cb.url, challenge: p.challenge }),
    { user: 'operator', password: 'set from the CLI stdin' },
  );
  const tok = await postForm(`${base}/token`, {
    grant_type: 'authorization_code',
    code: back.searchParams.get('code') ?? '',
    redirect_uri: cb.url,
    client_id: clientId,
    code_verifier: p.verifier,
  });
  t.equal(tok.status, 200, 'the password set by the CLI signs in');
  const mcp = (token: string) =>
    fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    });
  t.equal((await mcp(tok.body.access_token)).status, 200);

  const link = await admin.post<{ code: string; expiresAt: string }>('/v1/users/login-link', { name: 'operator' });
  t.match(link.code, /^exs_/, 'login-link mints a one-time code');

  const clients = (await admin.get<{ clients: ClientView[] }>('/v1/oauth/clients')).clients;
  t.match(
    clients.find((c) => c.clientId === clientId),
    { name: 'Admin Test Client', registration: 'dcr', grants: 1 },
  );
  // The CLI's list is this same operation rendered as a table; the CLI is spawned only where its own code
  // does something (stdin, the revoke), each spawn costing seconds.
  const grants = (await admin.get<{ grants: GrantView[] }>('/v1/oauth/grants')).grants;
  t.equal(grants.length, 1);
  t.match(grants[0], { user: 'operator', clientId, scopes: 'vault:read' });

  const revoked = await cli(['oauth', 'grants', 'revoke', '--', grants[0].id]); // a generated id may start with -
  t.equal(revoked.status, 0, revoked.stderr);
  t.equal((await mcp(tok.body.access_token)).status, 401, "the revoked grant's access token is refused at once");
  const refresh = await postForm(`${base}/token`, {
    grant_type: 'refresh_token',
    refresh_token: tok.body.refresh_token,
    client_id: clientId,
  });
  t.equal(refresh.body.error, 'invalid_grant', 'and so is its refresh token');

  const gone = await admin.post<{ revoked: string; grants: number }>('/v1/oauth/clients/revoke', { id: clientId });
  t.equal(gone.revoked, clientId);
  t.notOk(
    (await admin.get<{ clients: ClientView[] }>('/v1/oauth/clients')).clients.some((c) => c.clientId === clientId),
    'the client is gone',
  );
  const missing = await admin
    .post('/v1/oauth/grants/revoke', { id: 'no-such-grant' })
    .catch((e: { code: string }) => e);
  t.equal((missing as { code: string }).code, 'not_found');
});

function withConfigFile(args: string[], file: string): string[] {
  const end = args.indexOf('--');
  return end < 0 ? [...args, '--config', file] : [...args.slice(0, end), '--config', file, ...args.slice(end)];
}
