// Hostile Host headers against the live listener (issue 35): an IPv6 literal with trailing junk and a
// userinfo trick are refused with 403 on /mcp, /health and the panel — never a 500. node:http sends the
// header as given (fetch cannot); everything stays on loopback.
import t from 'tap';
import http from 'node:http';
import { startTestServer } from '../../src/host/testing/harness.js';

function send(url: string, method: string, host: string, headers: Record<string, string>, body?: string) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request(url, { method, headers: { ...headers, host } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

t.test('hostile Host headers get 403, not 500', async (t) => {
  const server = await startTestServer({ builtinDir: null });
  t.teardown(() => server.close());
  const port = new URL(server.url).port;
  const mcp = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${server.key}`,
  };
  const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  for (const host of ['[::1]evil.example', `127.0.0.1:${port}@evil`, `[::1]:${port}evil`, `localhost:${port}/x`]) {
    const r = await send(`${server.url}/mcp`, 'POST', host, mcp, list);
    t.equal(r.status, 403, `/mcp with Host ${host}`);
    t.match(r.body, /Host header not allowed/);
    t.equal((await send(`${server.url}/health`, 'GET', host, {})).status, 403, `/health with Host ${host}`);
    t.equal((await send(`${server.url}/admin/sign-in`, 'GET', host, {})).status, 403, `/admin with Host ${host}`);
  }
  const ok = await send(`${server.url}/mcp`, 'POST', `127.0.0.1:${port}`, mcp, list);
  t.equal(ok.status, 200, 'the plain loopback Host is served');
});

t.test("every response carries helmet's security headers: /mcp, a refusal, /health, the panel", async (t) => {
  const server = await startTestServer({ builtinDir: null });
  t.teardown(() => server.close());
  const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  const json = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const answers = {
    '/mcp': await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${server.key}` },
      body: list,
    }),
    '/mcp without a key': await fetch(`${server.url}/mcp`, { method: 'POST', headers: json, body: list }),
    '/health': await fetch(`${server.url}/health`),
  };
  for (const [what, res] of Object.entries(answers)) {
    await res.arrayBuffer();
    t.equal(res.headers.get('x-content-type-options'), 'nosniff', `${what}: nosniff`);
    t.equal(res.headers.get('x-frame-options'), 'SAMEORIGIN', `${what}: no framing by others`);
    t.match(res.headers.get('strict-transport-security') ?? '', /max-age=/, `${what}: HSTS`);
    t.equal(res.headers.get('content-security-policy'), null, `${what}: no CSP from helmet`);
  }
  // The panel's pages set their own, stricter frame and content policies over helmet's.
  const panel = await fetch(`${server.url}/admin/sign-in`);
  await panel.arrayBuffer();
  t.equal(panel.headers.get('x-content-type-options'), 'nosniff', 'the panel: nosniff');
  t.equal(panel.headers.get('x-frame-options'), 'DENY', 'the panel: never framed');
  t.match(panel.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/, 'the panel: its own CSP');
});
