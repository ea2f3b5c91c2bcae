// The host over stateful Streamable HTTP with a third-party family loaded by path: listing,
// calling, validation, refusals, read-only credentials, audit, prompts, resources, routes, health.
import t from 'tap';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { refusalOf, textOf } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { revokeApiKey, createApiKey } from '../../../src/host/auth/api-keys.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const echo = path.resolve(here, '../../fixtures/families/echo');
const needy = path.resolve(here, '../../fixtures/families/needy');

const server = await startTestServer({ builtinDir: null, config: { plugins: [echo, needy], echo: { prefix: '>' } } });
t.teardown(() => server.close());
const client = await server.connect();

t.test('tools/list serves the schemas as written, with all four hints', async (t) => {
  const { tools } = await client.listTools();
  const names = tools.map((x) => x.name).sort();
  t.same(names, ['append_note', 'boom', 'echo', 'slow', 'worker_double', 'worker_sum']);
  const echoTool = tools.find((x) => x.name === 'echo')!;
  t.equal(echoTool.title, 'Echo text');
  t.same(echoTool.annotations, {
    title: 'Echo text',
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  });
  t.equal((echoTool.inputSchema as { additionalProperties?: boolean }).additionalProperties, false);
  t.ok(echoTool.outputSchema);
});

t.test('a call returns structuredContent and the family render, with settings applied', async (t) => {
  const r = await client.callTool({ name: 'echo', arguments: { text: 'ab', repeat: 2 } });
  t.notOk(r.isError);
  t.same(r.structuredContent, { text: '>abab', length: 5, optional: false });
  t.equal(textOf(r), 'echo: >abab (5 chars)');
});

t.test('an undeclared argument is refused by name', async (t) => {
  const r = await client.callTool({ name: 'echo', arguments: { text: 'x', colour: 'red' } });
  t.equal(r.isError, true);
  const refusal = refusalOf(r)!;
  t.equal(refusal.code, 'unknown_argument');
  t.equal(refusal.argument, 'colour');
  t.same(refusal.accepted, ['text', 'repeat']);
  const lines = textOf(r).split('\n');
  t.match(lines[lines.length - 1], /^MCP-REFUSAL \{"code":"unknown_argument"/);
});

t.test('wrong types and missing arguments are refused with the problem named', async (t) => {
  const r = await client.callTool({ name: 'echo', arguments: { repeat: 'x' } });
  const refusal = refusalOf(r)!;
  t.equal(refusal.code, 'invalid_arguments');
  t.match(String(refusal.problems), /missing required argument "text"/);
  t.match(String(refusal.problems), /repeat must be integer/);
});

t.test('a tool whose optional service is missing is hidden and refused as unavailable', async (t) => {
  t.notOk((await client.listTools()).tools.some((x) => x.name === 'embed_text'));
  const r = refusalOf(await client.callTool({ name: 'embed_text', arguments: { text: 'x' } }))!;
  t.equal(r.code, 'service_unavailable');
  t.equal(r.service, 'embeddings');
});

t.test('a handler refusal and an unknown tool are typed refusals', async (t) => {
  t.equal(
    refusalOf(await client.callTool({ name: 'echo', arguments: { text: 'x', repeat: 9 } }))!.code,
    'invalid_arguments',
  );
  const unknown = refusalOf(await client.callTool({ name: 'no_such_tool', arguments: {} }))!;
  t.equal(unknown.code, 'unknown_tool');
  t.equal(unknown.retryable, false);
});

t.test('a thrown bug becomes an internal refusal with a reference, and the server keeps serving', async (t) => {
  const r = refusalOf(await client.callTool({ name: 'boom', arguments: {} }))!;
  t.equal(r.code, 'internal');
  t.match(String(r.reference), /^[0-9a-f]{8}$/);
  t.notOk((await client.callTool({ name: 'echo', arguments: { text: 'still here' } })).isError);
});

t.test('the worker pool runs tasks for families', async (t) => {
  const r = await client.callTool({ name: 'worker_sum', arguments: { values: [1, 2, 3.5] } });
  t.same(r.structuredContent, { sum: 6.5 });
  const d = await client.callTool({ name: 'worker_double', arguments: { x: 21 } });
  t.same(d.structuredContent, { doubled: 42 }, "a family's own worker module");
});

t.test('write tools: allowed for readwrite keys, hidden and refused for read-only keys', async (t) => {
  const ok = await client.callTool({ name: 'append_note', arguments: { path: 'made.md', text: 'hi' } });
  t.notOk(ok.isError, textOf(ok));
  t.match((ok.structuredContent as { content_hash: string }).content_hash, /^sha256:[0-9a-f]{64}$/);
  const again = refusalOf(
    await client.callTool({ name: 'append_note', arguments: { path: 'made.md', text: 'other' } }),
  )!;
  t.equal(again.code, 'already_exists');
  const ro = await server.connect({ key: server.readKey });
  const names = (await ro.listTools()).tools.map((x) => x.name);
  t.notOk(names.includes('append_note'));
  t.ok(names.includes('echo'));
  const refused = refusalOf(await ro.callTool({ name: 'append_note', arguments: { path: 'x.md', text: 'no' } }))!;
  t.equal(refused.code, 'read_only');
});

t.test('prompts and resources come from the family, services across families included', async (t) => {
  const { prompts } = await client.listPrompts();
  t.same(
    prompts.map((p) => p.name),
    ['greet'],
  );
  const got = await client.getPrompt({ name: 'greet', arguments: { name: 'Ada' } });
  t.equal((got.messages[0].content as { text: string }).text, 'hello Ada>');
  const { resources } = await client.listResources();
  t.ok(resources.some((r) => r.uri === 'echo://hello'));
  const { resourceTemplates } = await client.listResourceTemplates();
  t.same(
    resourceTemplates.map((r) => r.uriTemplate),
    ['echo://note/{+path}'],
  );
  const read = await client.readResource({ uri: 'echo://note/made.md' });
  t.equal((read.contents[0] as { text: string }).text, 'hi');
  await t.rejects(client.readResource({ uri: 'nothing://here' }), /No resource matches/);
});

t.test('family HTTP routes are served through the dispatcher', async (t) => {
  const res = await fetch(`${server.url}/echo-http/ping`);
  t.equal(res.status, 200);
  t.same(await res.json(), { pong: true, prefix: '>' });
});

t.test('/health reports counts and states, no paths or secrets', async (t) => {
  const res = await fetch(`${server.url}/health`, { headers: { authorization: `Bearer ${server.key}` } });
  const body = (await res.json()) as Record<string, any>;
  t.equal(body.status, 'degraded'); // needy is unavailable
  t.equal(body.families.echo, 'serving');
  t.equal(body.families.needy, 'unavailable');
  t.match(body.familyReasons.needy, /requires telepathy/);
  t.equal(body.db, 'ok');
  const text = JSON.stringify(body);
  t.notOk(text.includes(server.dir), 'no filesystem paths');
  t.notOk(text.includes('exo_'), 'no keys');
  // Without an operator's credential: the overall status only (no vault names or counts to enumerate).
  const anonymous: Array<Record<string, string>> = [
    {},
    { authorization: 'Bearer exo_not-a-key' },
    { cookie: 'exo_panel=forged' },
  ];
  for (const headers of anonymous) {
    const anon = await fetch(`${server.url}/health`, { headers });
    t.equal(anon.status, 200);
    t.same(await anon.json(), { status: 'degraded' }, `unauthenticated (${JSON.stringify(headers)}): status only`);
  }
});

t.test('every call wrote one audit row', async (t) => {
  await server.host.audit.flush();
  const rows = await server.host.database.db.selectFrom('usage_logs').selectAll().orderBy('id').execute();
  t.ok(rows.length >= 10);
  const unknownArg = rows.find((r) => r.refusal_code === 'unknown_argument')!;
  t.ok(unknownArg);
  t.equal(unknownArg.outcome, 'refused');
  t.equal(unknownArg.credential_name, 'test-rw');
  t.equal(unknownArg.family, 'echo');
  t.ok(rows.find((r) => r.refusal_code === 'internal' && r.outcome === 'error'));
  t.ok(rows.every((r) => (r.params as string).length <= 200));
  t.ok(rows.find((r) => r.tool === 'echo' && r.outcome === 'ok' && r.response_bytes > 0));
});

t.test('HTTP auth: missing, wrong and revoked keys get 401; revocation takes effect', async (t) => {
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
  };
  const post = (headers: Record<string, string>, body: unknown = init) =>
    fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  let res = await post({});
  t.equal(res.status, 401);
  t.match(res.headers.get('www-authenticate') ?? '', /Bearer/);
  res = await post({ authorization: 'Bearer exo_wrong' });
  t.equal(res.status, 401);
  const { raw, record } = await createApiKey(server.host.database.db, {
    name: 'temp',
    scope: 'read',
    vaultId: server.host.vaultHandle.id,
  });
  res = await post({ authorization: `Bearer ${raw}` });
  t.equal(res.status, 200);
  await revokeApiKey(server.host.database.db, record.id);
  server.host.verifier.forget();
  res = await post({ authorization: `Bearer ${raw}` });
  t.equal(res.status, 401);
  t.match(((await res.json()) as { error: { message: string } }).error.message, /revoked/);
});

t.test('malformed JSON, oversized bodies, bad Host and Origin get clear HTTP answers', async (t) => {
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${server.key}`,
  };
  let res = await fetch(`${server.url}/mcp`, { method: 'POST', headers, body: '{"jsonrpc": "2.0", "id": 1, "meth' });
  t.equal(res.status, 400);
  t.equal(((await res.json()) as { error: { code: number } }).error.code, -32700);
  res = await fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ pad: 'x'.repeat(5 * 1024 * 1024) }),
  });
  t.equal(res.status, 413);
  t.match(((await res.json()) as { error: { message: string } }).error.message, /server\.bodyLimitBytes/);
  res = await fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: { ...headers, origin: 'https://evil.example' },
    body: '{}',
  });
  t.equal(res.status, 403);
  t.equal(await statusWithHost(`${server.url}/mcp`, 'evil.example:80', headers), 403);
  t.equal(
    await statusWithHost(`${server.url}/mcp`, `localhost:${new URL(server.url).port}`, headers),
    400,
    'a local Host passes the check',
  );
  res = await fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  t.equal(res.status, 200, 'a 2025 request without a session is served on its own');
  t.ok(((await res.json()) as { result: { tools: unknown[] } }).result.tools.length > 0);
  res = await fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: { ...headers, 'mcp-session-id': 'nope' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
  });
  t.equal(res.status, 404, 'an unknown session is not found');
  t.equal(((await res.json()) as { id: unknown }).id, 7, 'the error carries the request id');
});

t.test("the MCP endpoint reads its own bodies: Fastify's answers, and the ones it never gave", async (t) => {
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${server.key}`,
  };
  const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  const errorOf = async (res: Response) => ((await res.json()) as { error: { code: number; message: string } }).error;

  let res = await fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers,
    body: '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"__proto__":{"admin":true}}}',
  });
  t.equal(res.status, 400, 'a __proto__ key is refused, as Fastify refused it');
  t.equal((await errorOf(res)).code, -32700);
  res = await fetch(`${server.url}/mcp`, { method: 'POST', headers, body: '' });
  t.equal(res.status, 400, 'an empty POST');
  t.match((await errorOf(res)).message, /empty/);
  res = await fetch(`${server.url}/mcp`, {
    method: 'DELETE',
    headers: { ...headers, 'content-type': 'text/plain' },
    body: 'bye',
  });
  t.equal(res.status, 415, 'a DELETE with a body that is not JSON');
  res = await fetch(`${server.url}/mcp`, { method: 'HEAD', headers });
  t.equal(res.status, 405, 'HEAD is answered as GET is without a session');
  res = await fetch(`${server.url}/mcp`, { method: 'PUT', headers, body: list });
  t.equal(res.status, 404, 'a method the endpoint does not answer falls through to the 404');
  res = await fetch(`${server.url}/mcp?from=test`, { method: 'POST', headers, body: list });
  t.equal(res.status, 200, 'a query string does not change the path');

  // A declared length over the limit is refused before a byte of the body is sent.
  const declared = await new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
    const req = http.request(`${server.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(64 * 1024 * 1024) },
    });
    req.on('response', (r) => {
      r.resume();
      resolve({ status: r.statusCode ?? 0, connection: r.headers.connection });
      req.destroy();
    });
    req.on('error', reject);
    req.flushHeaders();
  });
  t.same(declared, { status: 413, connection: 'close' }, 'refused from the header, the connection closed');

  // A client that gives up halfway through its body leaves the server serving.
  await new Promise<void>((resolve) => {
    const req = http.request(`${server.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, 'content-length': '1000' },
    });
    req.on('error', () => resolve());
    req.write('{"jsonrpc":"2.0",');
    setTimeout(() => {
      req.destroy();
      resolve();
    }, 50);
  });
  res = await fetch(`${server.url}/mcp`, { method: 'POST', headers, body: list });
  t.equal(res.status, 200, 'served after a body cut short');
});

/** fetch cannot set Host; node:http can. */
function statusWithHost(url: string, host: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { ...headers, host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end('{}');
  });
}
