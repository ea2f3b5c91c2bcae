// bench/oauth: the cost of an OAuth access token on every MCP request (three indexed reads: token,
// grant, user) against an API key (cached) on the same server and the same request (a session-less
// 2025-era tools/list), and the code exchange. Prints medians of ROUNDS rounds of REQUESTS each.
// Usage: tsx bench/oauth.ts
import path from 'node:path';
import { setPassword } from '../src/host/auth/passwords.js';
import { userByName } from '../src/host/auth/users.js';
import { startTestServer } from '../src/host/testing/harness.js';
import {
  authorizeOverHttp,
  authorizeUrl,
  callbackServer,
  FormAgent,
  pkce,
  postForm,
  register,
} from '../test/fixtures/oauth/flow.js';
import { machine, median, ROOT } from './lib/setup.js';

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const REQUESTS = Number(process.env.REQUESTS ?? 200);

const server = await startTestServer({
  builtinDir: null,
  loopbackPublicUrl: true,
  config: { plugins: [path.join(ROOT, 'test/fixtures/families/echo')] },
});
const cb = await callbackServer();
try {
  const db = server.host.database.db;
  await setPassword(db, (await userByName(db, 'operator'))!.id, 'bench password');
  const reg = await register(server.url, {
    client_name: 'bench',
    redirect_uris: [cb.url],
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
  });
  const exchanges: number[] = [];
  let access = '';
  for (let i = 0; i < ROUNDS; i++) {
    const p = pkce();
    const back = await authorizeOverHttp(
      new FormAgent(),
      server.url,
      authorizeUrl(server.url, { clientId: reg.body.client_id, redirectUri: cb.url, challenge: p.challenge }),
      { user: 'operator', password: 'bench password' },
    );
    const t0 = performance.now();
    const tok = await postForm(`${server.url}/token`, {
      grant_type: 'authorization_code',
      code: back.searchParams.get('code') ?? '',
      redirect_uri: cb.url,
      client_id: reg.body.client_id,
      code_verifier: p.verifier,
    });
    exchanges.push(performance.now() - t0);
    access = tok.body.access_token;
  }
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  const round = async (token: string) => {
    const t0 = performance.now();
    for (let i = 0; i < REQUESTS; i++) {
      const res = await fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body,
      });
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
      await res.arrayBuffer();
    }
    return (performance.now() - t0) / REQUESTS;
  };
  const keyMs: number[] = [];
  const oauthMs: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    keyMs.push(await round(server.key));
    oauthMs.push(await round(access));
  }
  const spread = (xs: number[]) => `min ${Math.min(...xs).toFixed(2)}, max ${Math.max(...xs).toFixed(2)}`;
  console.log(
    `# machine: ${machine()}; embedded PGlite, echo family; ${ROUNDS} rounds of ${REQUESTS} sequential tools/list`,
  );
  console.log(
    `oauth_tools_list_api_key: ${median(keyMs).toFixed(2)} ms per request (median of ${ROUNDS}, ${spread(keyMs)})`,
  );
  console.log(
    `oauth_tools_list_access_token: ${median(oauthMs).toFixed(2)} ms per request (median of ${ROUNDS}, ${spread(oauthMs)})`,
  );
  console.log(`oauth_access_token_vs_api_key: ${(median(oauthMs) / median(keyMs)).toFixed(2)} ratio`);
  console.log(`oauth_code_exchange: ${median(exchanges).toFixed(1)} ms (median of ${ROUNDS}, ${spread(exchanges)})`);
} finally {
  await cb.close();
  await server.close();
}
