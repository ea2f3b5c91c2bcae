// One endpoint, both protocol eras, driven by real SDK clients: a 2026-07-28 client (SDK v2, pinned),
// a 2025-11-25 client with a session (SDK v1) and one that never echoes Mcp-Session-Id (claude.ai's
// backend does not), each listing tools and calling a read and a write tool. Also the 2026-07-28 wire
// checks, subscriptions/listen notifications for list changes and note updates, completions, and the
// edge answers (DELETE with an empty JSON body, `/` served like `/mcp`).
import t from 'tap';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startTestServer, type TestServer } from '../../../src/host/testing/harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const builtins = path.resolve(here, '../../../plugins');

const tagged = Object.fromEntries(
  Array.from({ length: 6 }, (_, i) => [`Tagged/n${i}.md`, `# Note ${i}\n\n#draft text\n`]),
);
const server: TestServer = await startTestServer({
  builtinDir: builtins,
  files: { 'Welcome.md': '# Welcome\n\nHello.\n', 'Projects/Alpha.md': '# Alpha\n', ...tagged },
});
t.teardown(() => server.close());
const auth = { authorization: `Bearer ${server.key}` };

function modernClient(url = `${server.url}/mcp`): Promise<ClientV2> {
  const client = new ClientV2(
    { name: 'modern-test', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  return client.connect(new HttpV2(new URL(url), { requestInit: { headers: auth } })).then(() => client);
}

async function readAndWrite(
  t: Pick<typeof import('tap').default, 'ok' | 'notOk' | 'match' | 'equal'>,
  client: { callTool: ClientV1['callTool']; listTools: ClientV1['listTools'] },
  file: string,
) {
  const tools = await client.listTools();
  t.ok(
    tools.tools.some((x) => x.name === 'read_note'),
    'tools listed',
  );
  const read = (await client.callTool({ name: 'read_note', arguments: { path: 'Welcome.md' } })) as {
    isError?: boolean;
    content: Array<{ text: string }>;
  };
  t.notOk(read.isError, 'read_note answered');
  t.match(read.content[0].text, /Hello/);
  const wrote = (await client.callTool({ name: 'create_note', arguments: { path: file, content: '# New\n' } })) as {
    isError?: boolean;
    structuredContent?: { path: string };
  };
  t.notOk(wrote.isError, 'create_note answered');
  t.equal(wrote.structuredContent?.path, file);
}

t.test('a 2026-07-28 client discovers, lists, reads and writes without a session', async (t) => {
  const client = await modernClient();
  t.teardown(() => client.close());
  t.equal(client.getProtocolEra(), 'modern');
  t.equal(client.getServerVersion()?.name, 'exocortex');
  await readAndWrite(t, client as never, 'from-modern.md');
});

t.test('a 2025-11-25 client with a session, and one that never echoes the session id', async (t) => {
  const withSession = await server.connect();
  t.teardown(() => withSession.close());
  await readAndWrite(t, withSession, 'from-v1.md');

  // A fetch that drops Mcp-Session-Id on the way out, as claude.ai's backend does.
  const forgetful: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.delete('mcp-session-id');
    return fetch(input, { ...init, headers });
  };
  const client = new ClientV1({ name: 'no-session', version: '1.0.0' });
  await client.connect(new HttpV1(new URL(`${server.url}/mcp`), { requestInit: { headers: auth }, fetch: forgetful }));
  t.teardown(() => client.close());
  await readAndWrite(t, client, 'from-sessionless.md');
});

t.test('2026-07-28 wire checks: header/body mismatch and a missing method header are refused with 400', async (t) => {
  const body = {
    jsonrpc: '2.0',
    id: 3,
    method: 'tools/list',
    params: {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  };
  const headers = {
    ...auth,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
  };
  let res = await fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: { ...headers, 'mcp-method': 'tools/call' },
    body: JSON.stringify(body),
  });
  t.equal(res.status, 400, 'Mcp-Method disagreeing with the body');
  const answer = (await res.json()) as { error: { code: number }; id: unknown };
  t.equal(answer.error.code, -32020);
  t.equal(answer.id, 3, 'the error names the request');
  res = await fetch(`${server.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
  t.equal(res.status, 400, 'no Mcp-Method header at all');
  await res.body?.cancel();
  res = await fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: { ...headers, 'mcp-method': 'tools/list' },
    body: JSON.stringify(body),
  });
  t.equal(res.status, 200, 'matching headers are served');
  const listed = (await res.json()) as { result: { tools: unknown[]; ttlMs: number; cacheScope: string } };
  t.ok(listed.result.tools.length > 0);
  t.equal(listed.result.cacheScope, 'private', 'tools/list is private to the credential');
  t.ok(listed.result.ttlMs > 0, 'with a TTL');
});

t.test('subscriptions/listen delivers list changes and note updates; completions come from the index', async (t) => {
  const client = await modernClient();
  t.teardown(() => client.close());
  const updates: string[] = [];
  client.setNotificationHandler('notifications/resources/updated', (n) => void updates.push(n.params.uri));
  const sub = await client.listen({ toolsListChanged: true, resourceSubscriptions: ['vault://note/Welcome.md'] });
  t.teardown(() => sub.close());
  t.same(
    sub.honoredFilter.resourceSubscriptions,
    ['vault://note/Welcome.md'],
    'the server honours the note subscription',
  );
  writeFileSync(path.join(server.vaultDir, 'Welcome.md'), '# Welcome\n\nChanged outside.\n');
  const deadline = Date.now() + 20_000;
  while (!updates.includes('vault://note/Welcome.md') && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  t.ok(updates.includes('vault://note/Welcome.md'), 'an outside edit reached the subscriber');

  const done = await client.complete({
    ref: { type: 'ref/prompt', name: 'summarize_note' },
    argument: { name: 'path', value: 'alp' },
  });
  t.same(done.completion.values, ['Projects/Alpha.md'], 'note paths complete from the index');
});

t.test('a 2025 session hears resources/updated for a note it subscribed to', async (t) => {
  const client = await server.connect();
  t.teardown(() => client.close());
  const updates: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
  await client.subscribeResource({ uri: 'vault://note/Projects/Alpha.md' });
  await client.callTool({
    name: 'edit_note',
    arguments: { path: 'Projects/Alpha.md', operation: 'append', content: '\nmore\n' },
  });
  const deadline = Date.now() + 20_000;
  while (!updates.includes('vault://note/Projects/Alpha.md') && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  t.ok(updates.includes('vault://note/Projects/Alpha.md'), 'an agent edit reached the subscriber');
});

t.test('edge answers: DELETE with an empty JSON body, and / served like /mcp', async (t) => {
  const init = await fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'py', version: '1' } },
    }),
  });
  const sid = init.headers.get('mcp-session-id');
  t.ok(sid, 'a session was opened');
  await init.body?.cancel();
  const del = await fetch(`${server.url}/mcp`, {
    method: 'DELETE',
    headers: { ...auth, 'content-type': 'application/json', 'mcp-session-id': sid! },
  });
  t.equal(del.status, 200, 'the session is closed');
  const again = await fetch(`${server.url}/mcp`, {
    method: 'DELETE',
    headers: { ...auth, 'content-type': 'application/json', 'mcp-session-id': sid! },
  });
  t.equal(again.status, 404, 'and then unknown');

  const root = await modernClient(`${server.url}/`);
  t.teardown(() => root.close());
  t.ok((await root.listTools()).tools.length > 10, 'the root path lists the same tools');
  const get = await fetch(`${server.url}/`, { headers: { ...auth, accept: 'text/event-stream' } });
  t.equal(get.status, 405, 'GET / without a session answers as /mcp does');
});

t.test('a long tool reports progress to a client that asked, in both eras and without a session', async (t) => {
  const forgetful: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.delete('mcp-session-id');
    return fetch(input, { ...init, headers });
  };
  const sessionless = new ClientV1({ name: 'no-session', version: '1.0.0' });
  await sessionless.connect(
    new HttpV1(new URL(`${server.url}/mcp`), { requestInit: { headers: auth }, fetch: forgetful }),
  );
  t.teardown(() => sessionless.close());
  const modern = await modernClient();
  t.teardown(() => modern.close());
  const withSession = await server.connect();
  t.teardown(() => withSession.close());
  const runs: Array<[string, (onprogress: (p: { progress: number; total?: number }) => void) => Promise<unknown>]> = [
    [
      '2025 session',
      (onprogress) =>
        withSession.callTool(
          { name: 'rename_tag', arguments: { old_tag: 'draft', new_tag: 'wip', dry_run: true } },
          undefined,
          { onprogress },
        ),
    ],
    [
      '2025 without a session',
      (onprogress) =>
        sessionless.callTool(
          { name: 'rename_tag', arguments: { old_tag: 'draft', new_tag: 'wip', dry_run: true } },
          undefined,
          { onprogress },
        ),
    ],
    [
      '2026-07-28',
      (onprogress) =>
        modern.callTool({ name: 'rename_tag', arguments: { old_tag: 'draft', new_tag: 'wip', dry_run: true } }, {
          onprogress,
        } as never),
    ],
  ];
  for (const [label, run] of runs) {
    const seen: number[] = [];
    const r = (await run((p) => void seen.push(p.progress))) as { isError?: boolean };
    t.notOk(r.isError, `${label}: answered`);
    t.ok(seen.length >= 3, `${label}: progress arrived (${seen.length} notifications)`);
    t.same(
      [...seen].sort((a, b) => a - b),
      seen,
      `${label}: progress only grows`,
    );
  }
});
