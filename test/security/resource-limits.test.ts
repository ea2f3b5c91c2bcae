// Unauthenticated and per-credential resource use (issue 17): the credential is checked from the headers
// before any body byte is read; one credential cannot take every session; slow requests are cut off by
// named timeouts; one session cannot subscribe without bound. Loopback only.
import t from 'tap';
import net from 'node:net';
import { startTestServer, type TestServer } from '../../src/host/testing/harness.js';

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'limits', version: '1' } },
};

function mcpPost(s: TestServer, key: string | undefined, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${s.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

/** Raw bytes to the server; resolves with what came back once the server answers or closes (or after `waitMs`). */
function raw(s: TestServer, bytes: string, waitMs: number): Promise<{ text: string; closed: boolean; ms: number }> {
  const { port } = new URL(s.url);
  return new Promise((resolve) => {
    const started = Date.now();
    const sock = net.connect(Number(port), '127.0.0.1');
    let text = '';
    let settled = false;
    const done = (closed: boolean) => {
      if (settled) return;
      settled = true;
      sock.destroy();
      resolve({ text, closed, ms: Date.now() - started });
    };
    sock.on('data', (d) => {
      text += d.toString();
      if (/^HTTP\/1\.1 \d{3}/.test(text) && text.includes('\r\n\r\n')) setTimeout(() => done(false), 50);
    });
    sock.on('close', () => done(true));
    sock.on('error', () => done(true));
    sock.write(bytes);
    setTimeout(() => done(false), waitMs);
  });
}

t.test('an unauthenticated body is refused from the headers, before it is read', async (t) => {
  const s = await startTestServer();
  t.teardown(() => s.close());
  const { host } = new URL(s.url);
  // 3 MiB declared (under server.bodyLimitBytes), 1 KiB sent: the answer must not wait for the rest.
  const head = `POST /mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${3 * 1024 * 1024}\r\n\r\n`;
  const r = await raw(s, head + '['.repeat(1024), 5000);
  t.match(r.text, /^HTTP\/1\.1 401 /, '401 without waiting for the body');
  t.ok(r.ms < 4000, `answered in ${r.ms} ms`);
  const bad = await raw(
    s,
    head.replace(
      'Content-Type: application/json\r\n',
      'Authorization: Bearer exo_nope\r\nContent-Type: application/json\r\n',
    ) + '['.repeat(1024),
    5000,
  );
  t.match(bad.text, /^HTTP\/1\.1 401 /, 'a wrong key too');
});

// The session and subscription bounds share one host (a host start is most of each test's time): the
// sessions the first test leaves are idle, so the second's session evicts one of them, and only the second
// subscribes.
let bounded: Promise<TestServer> | undefined;
const boundedServer = () => {
  bounded ??= startTestServer({
    files: { 'a.md': 'a' },
    config: { server: { maxSessions: 5, maxSessionsPerCredential: 3, maxSubscriptionsPerSession: 3 } },
  }).then((s) => {
    t.teardown(() => s.close());
    return s;
  });
  return bounded;
};

t.test('one credential cannot take every session', async (t) => {
  const s = await boundedServer();
  const ids: string[] = [];
  for (let i = 0; i < 8; i++) {
    const r = await mcpPost(s, s.readKey, INIT);
    t.equal(r.status, 200, `read key initialize #${i + 1} succeeds (its oldest idle session makes room)`);
    ids.push(r.headers.get('mcp-session-id') ?? '');
    await r.text();
  }
  t.equal(
    s.host.hub.countFor((await s.host.verifier.verify(s.readKey)).id),
    3,
    'it holds at most maxSessionsPerCredential sessions',
  );
  const gone = await mcpPost(
    s,
    s.readKey,
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    { 'mcp-session-id': ids[0], 'mcp-protocol-version': '2025-06-18' },
  );
  t.equal(gone.status, 404, 'the evicted oldest session is gone');
  await gone.text();
  const live = await mcpPost(
    s,
    s.readKey,
    { jsonrpc: '2.0', id: 3, method: 'tools/list' },
    { 'mcp-session-id': ids[7], 'mcp-protocol-version': '2025-06-18' },
  );
  t.equal(live.status, 200, 'the newest still works');
  await live.text();
  for (let i = 0; i < 3; i++) {
    const other = await mcpPost(s, s.key, INIT);
    t.equal(other.status, 200, `another credential still gets a session (#${i + 1})`);
    await other.text();
  }
});

t.test('slow headers and slow bodies are cut off by the named timeouts', async (t) => {
  const s = await startTestServer({ config: { server: { requestTimeoutMs: 1000, headersTimeoutMs: 1000 } } });
  t.teardown(() => s.close());
  const { host } = new URL(s.url);
  const slowHead = await raw(s, `POST /mcp HTTP/1.1\r\nHost: ${host}\r\n`, 6000);
  t.ok(slowHead.closed || /^HTTP\/1\.1 408/.test(slowHead.text), 'unfinished headers: 408 or closed');
  t.ok(slowHead.ms < 5000, `within ${slowHead.ms} ms`);
  const body = JSON.stringify(INIT);
  const slowBody = await raw(
    s,
    `POST /mcp HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${s.key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    6000,
  );
  t.ok(slowBody.closed || /^HTTP\/1\.1 408/.test(slowBody.text), 'unfinished body: 408 or closed');
  t.ok(slowBody.ms < 5000, `within ${slowBody.ms} ms`);
});

t.test("subscriptions count against the caller's rate bucket", async (t) => {
  const s = await startTestServer({ files: { 'a.md': 'a' }, config: { admission: { callsPerMinute: 3 } } });
  t.teardown(() => s.close());
  const c = await s.connect();
  for (let i = 0; i < 3; i++) await c.subscribeResource({ uri: `vault://note/r${i}.md` });
  await t.rejects(
    c.subscribeResource({ uri: 'vault://note/r3.md' }),
    /rate_limited|Too many calls/,
    'the fourth subscribe in a minute is refused',
  );
});

t.test('a session subscribes to at most maxSubscriptionsPerSession resources', async (t) => {
  const s = await boundedServer();
  const c = await s.connect();
  for (let i = 0; i < 3; i++) await c.subscribeResource({ uri: `vault://note/n${i}.md` });
  await c.subscribeResource({ uri: 'vault://note/n0.md' }); // already held: free
  await t.rejects(
    c.subscribeResource({ uri: 'vault://note/n3.md' }),
    /too_many_subscriptions|resource subscriptions/,
    'the fourth distinct URI is refused',
  );
  await c.unsubscribeResource({ uri: 'vault://note/n0.md' });
  await c.subscribeResource({ uri: 'vault://note/n3.md' });
  t.equal(s.host.subscriptions.count(), 3, 'unsubscribing makes room');
});
