// The authorization server over a native PostgreSQL 15 (the same adapter and migrations as PGlite): one
// flow to a token, refresh and reuse detection, and a second start on the same database keeps its
// signing key (made once, never per start). Skips without the server binaries.
import t from 'tap';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setPassword } from '../../../src/host/auth/passwords.js';
import { userByName } from '../../../src/host/auth/users.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { postgresAvailable, startPostgres } from '../../../src/host/testing/postgres-server.js';
import {
  authorizeOverHttp,
  authorizeUrl,
  callbackServer,
  FormAgent,
  pkce,
  postForm,
  register,
} from '../../fixtures/oauth/flow.js';

const echo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/families/echo');

t.test(
  'OAuth over PostgreSQL: flow, rotation, reuse detection, keys kept across starts',
  { skip: postgresAvailable() ? false : 'PostgreSQL 15 server binaries not installed' },
  async (t) => {
    const pg = await startPostgres();
    t.teardown(() => pg.stop());
    const cb = await callbackServer();
    t.teardown(() => cb.close());
    // A second start serves the same vault root (on a server database a differing root is refused).
    let vault: string | undefined;
    const start = () =>
      startTestServer({
        builtinDir: null,
        loopbackPublicUrl: true,
        config: { plugins: [echo], database: { url: pg.url }, ...(vault ? { vault: { path: vault } } : {}) },
      });
    const server = await start();
    vault = server.vaultDir;
    const base = server.url;
    t.equal(server.host.database.engine.kind, 'postgres');
    const db = server.host.database.db;
    await setPassword(db, (await userByName(db, 'operator'))!.id, 'postgres password');
    const reg = await register(base, {
      client_name: 'PG Client',
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
      { user: 'operator', password: 'postgres password' },
    );
    const tok = await postForm(`${base}/token`, {
      grant_type: 'authorization_code',
      code: back.searchParams.get('code') ?? '',
      redirect_uri: cb.url,
      client_id: clientId,
      code_verifier: p.verifier,
    });
    t.equal(tok.status, 200, tok.status === 200 ? 'answered 200' : JSON.stringify(tok.body));
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
    t.equal((await mcp(tok.body.access_token)).status, 200, 'the token works');
    const refreshed = await postForm(`${base}/token`, {
      grant_type: 'refresh_token',
      refresh_token: tok.body.refresh_token,
      client_id: clientId,
    });
    t.equal(refreshed.status, 200);
    const replay = await postForm(`${base}/token`, {
      grant_type: 'refresh_token',
      refresh_token: tok.body.refresh_token,
      client_id: clientId,
    });
    t.equal(replay.body.error, 'invalid_grant');
    t.equal((await mcp(refreshed.body.access_token)).status, 401, 'reuse revoked the grant');
    const jwks = await (await fetch(`${base}/oauth/jwks`)).json();
    await server.close();

    const again = await start();
    t.teardown(() => again.close());
    t.same(await (await fetch(`${again.url}/oauth/jwks`)).json(), jwks, 'the signing key survives a restart');
    const client = await postForm(`${again.url}/token`, {
      grant_type: 'refresh_token',
      refresh_token: refreshed.body.refresh_token,
      client_id: clientId,
    });
    t.equal(client.body.error, 'invalid_grant', 'the DCR client is still known; the revoked grant stays revoked');
  },
);
