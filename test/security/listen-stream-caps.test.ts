// subscriptions/listen streams are connections like sessions (issue 35): one credential, and one user,
// may hold only as many as the session caps allow (server.maxSessionsPerCredential, the user's sessions
// limit), counted together with sessions, so a read-only key cannot take every stream on the server.
import t from 'tap';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { startTestServer } from '../../src/host/testing/harness.js';

t.test('listen streams count against the per-credential and per-user caps', async (t) => {
  const s = await startTestServer({
    files: { 'a.md': 'a\n' },
    config: { server: { maxSessionsPerCredential: 2 }, admission: { perUser: { sessions: 3 } } },
  });
  t.teardown(() => s.close());
  const clients: ClientV2[] = [];
  t.teardown(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
  });
  const listen = async (key: string) => {
    const client = new ClientV2(
      { name: 'listener', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(
      new HttpV2(new URL(`${s.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }),
    );
    clients.push(client);
    return client.listen({ toolsListChanged: true });
  };
  const reader = (await s.host.verifier.verify(s.readKey)).id;
  await listen(s.readKey);
  await listen(s.readKey);
  t.equal(s.host.hub.countFor(reader), 2, 'two streams held by the read key');
  await t.rejects(
    listen(s.readKey),
    /maxSessionsPerCredential/,
    "the read key's third stream is refused, naming the setting",
  );
  t.equal(s.host.hub.countFor(reader), 2);

  await listen(s.key);
  await t.rejects(listen(s.key), /sessions limit/, 'the user (both keys are the operator’s) is at its cap of 3');
});
