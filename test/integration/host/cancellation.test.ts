// Cancelling a call stops waiting for it and frees its admission slot, in both protocol eras: a 2025
// client sends notifications/cancelled, a 2026-07-28 client aborts its request (closes the stream). With
// one read slot, a second call succeeds right after the first is cancelled instead of being refused busy.
import t from 'tap';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { startTestServer } from '../../../src/host/testing/harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const echo = path.resolve(here, '../../fixtures/families/echo');
const server = await startTestServer({
  builtinDir: null,
  config: { plugins: [echo], admission: { concurrency: { read: 1 }, queueTimeoutMs: 500 } },
});
t.teardown(() => server.close());
// The call's deadline (tools.callTimeoutMs), end to end (test/unit/host/call-deadline.test.ts has its parts);
// started with the other before any test, so that no test is created after the first ones have ended.
const timed = await startTestServer({
  builtinDir: null,
  config: {
    plugins: [echo],
    tools: { callTimeoutMs: 150 },
    // Queued for up to 5 s: the slow call (20 s unless its deadline ends it) must have let go of the slot.
    admission: { concurrency: { read: 1 }, queueTimeoutMs: 5_000 },
  },
});
t.teardown(() => timed.close());

async function cancelThenCall(
  t: Pick<typeof import('tap').default, 'ok' | 'equal' | 'notOk'>,
  call: (signal: AbortSignal) => Promise<unknown>,
  quick: () => Promise<{ isError?: boolean; structuredContent?: unknown }>,
) {
  const abort = new AbortController();
  const slow = call(abort.signal).then(
    () => 'answered',
    () => 'cancelled',
  );
  await new Promise((r) => setTimeout(r, 300)); // the slow call holds the only read slot now
  const started = Date.now();
  abort.abort();
  t.equal(await slow, 'cancelled', 'the client gave up on the slow call');
  const r = await quick();
  t.notOk(r.isError, 'the next call got the slot, not busy');
  t.ok(Date.now() - started < 5_000, 'without waiting for the slow call to finish');
}

t.test('2025-11-25: notifications/cancelled frees the slot', async (t) => {
  const client = await server.connect();
  t.teardown(() => client.close());
  await cancelThenCall(
    t,
    (signal) => client.callTool({ name: 'slow', arguments: { ms: 20_000 } }, undefined, { signal }),
    () => client.callTool({ name: 'echo', arguments: { text: 'next' } }) as never,
  );
});

t.test('2026-07-28: aborting the request frees the slot', async (t) => {
  const client = new ClientV2(
    { name: 'modern', version: '1' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new HttpV2(new URL(`${server.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${server.key}` } } }),
  );
  t.teardown(() => client.close());
  await cancelThenCall(
    t,
    (signal) => client.callTool({ name: 'slow', arguments: { ms: 20_000 } }, { signal }),
    () => client.callTool({ name: 'echo', arguments: { text: 'next' } }) as never,
  );
});

t.test('deadline: a call past tools.callTimeoutMs is refused as timeout and frees its slot', async (t) => {
  const client = await timed.connect();
  t.teardown(() => client.close());
  const started = Date.now();
  const r = (await client.callTool({ name: 'slow', arguments: { ms: 20_000 } })) as {
    isError?: boolean;
    content: Array<{ text?: string }>;
  };
  t.ok(r.isError, 'refused');
  t.match(r.content.at(-1)?.text, /MCP-REFUSAL \{"code":"timeout"/, 'as timeout');
  t.ok(Date.now() - started < 5_000, `at the deadline, not after the handler (${Date.now() - started} ms)`);
  const next = await client.callTool({ name: 'echo', arguments: { text: 'next' } });
  t.notOk(next.isError, 'the next call got the slot');
});
