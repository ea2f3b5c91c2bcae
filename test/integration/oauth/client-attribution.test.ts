// An OAuth token names its client (issue 43): a connector that opens no MCP session and sends no client
// name — as claude.ai's backend connects — still leaves its registered name and client id on every
// revision and change event it makes, and undo_changes {client} selects its changes by either.
import t from 'tap';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setPassword } from '../../../src/host/auth/passwords.js';
import { userByName } from '../../../src/host/auth/users.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';
import {
  authorizeOverHttp,
  authorizeUrl,
  callbackServer,
  FormAgent,
  pkce,
  postForm,
  register,
} from '../../fixtures/oauth/flow.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const families = ['notes', 'change-feed', 'history'].map((f) => path.join(root, 'plugins', f));
const PASSWORD = 'a long and careful password';

t.test('revisions and change events name the OAuth client; undo selects by it', async (t) => {
  const server = await startTestServer({ builtinDir: null, loopbackPublicUrl: true, config: { plugins: families } });
  const cb = await callbackServer();
  t.teardown(async () => {
    await cb.close();
    await server.close();
  });
  const db = server.host.database.db;
  await setPassword(db, (await userByName(db, 'operator'))!.id, PASSWORD);
  await (server.host.services.named.get('index') as IndexService).whenReady(server.host.vaultHandle.id);
  const base = server.url;
  const reg = await register(base, {
    client_name: 'Claude',
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
    authorizeUrl(base, { clientId, redirectUri: cb.url, challenge: p.challenge, scope: 'vault:read vault:write' }),
    { user: 'operator', password: PASSWORD, scopes: ['vault:read', 'vault:write'] },
  );
  const tok = await postForm(`${base}/token`, {
    grant_type: 'authorization_code',
    code: back.searchParams.get('code') ?? '',
    redirect_uri: cb.url,
    client_id: clientId,
    code_verifier: p.verifier,
  });
  t.equal(tok.status, 200, JSON.stringify(tok.body));
  // Stateless, as a backend connector calls: no initialize, no session, no clientInfo.
  let id = 0;
  const callTool = async (token: string, name: string, args: Record<string, unknown>) => {
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } }),
    });
    const text = await res.text();
    const json = text.startsWith('{') ? JSON.parse(text) : JSON.parse(/^data: (.*)$/m.exec(text)![1]);
    if (json.error || json.result?.isError) throw new Error(`${name}: ${text.slice(0, 500)}`);
    return json.result.structuredContent;
  };
  const token = tok.body.access_token as string;
  await callTool(token, 'create_note', { path: 'from-claude', content: 'hello\n' });
  await callTool(token, 'edit_note', { path: 'from-claude', content: 'more\n', append: true });

  const admin = await server.connect({});
  const list = (await admin.callTool({ name: 'list_revisions', arguments: { path: 'from-claude' } })) as any;
  t.same(
    list.structuredContent.revisions.map((r: any) => [r.client, r.client_id]),
    [
      ['Claude', clientId],
      ['Claude', clientId],
    ],
    'every revision names the registered client and its id',
  );
  t.match(list.content[0].text, new RegExp(`via Claude \\(client ${clientId}\\)`));

  const changes = (await admin.callTool({ name: 'get_changes', arguments: { since: '2000-01-01' } })) as any;
  const mine = changes.structuredContent.events.filter((c: any) => c.path === 'from-claude.md');
  t.ok(mine.length > 0, 'the change feed saw the writes');
  for (const c of mine) t.match(c.by_name, `Claude (oauth client ${clientId})`, 'each change event names the client');

  for (const selector of ['Claude', clientId]) {
    const plan = (await admin.callTool({ name: 'undo_changes', arguments: { client: selector } })) as any;
    t.same(
      plan.structuredContent.reverted.map((r: any) => r.path),
      ['from-claude.md'],
      `undo_changes {client: ${selector === clientId ? 'the client id' : 'the registered name'}} selects its changes`,
    );
  }
});
