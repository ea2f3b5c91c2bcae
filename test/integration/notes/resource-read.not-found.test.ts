// resources/read of a note that does not exist answers the SDK's resource-not-found (InvalidParams with
// data.uri, which v2 clients read as ResourceNotFoundError), never -32603 Internal error (issue 35).
import t from 'tap';
import { ProtocolErrorCode } from '@modelcontextprotocol/client';
import { startTestServer } from '../../../src/host/testing/harness.js';

t.test('a missing note is resource-not-found', async (t) => {
  const server = await startTestServer({
    files: { 'Here.md': '# here\n' },
    config: {
      families: Object.fromEntries(
        ['search', 'files', 'graph', 'tasks', 'transfer', 'change-feed', 'history'].map((f) => [f, { enabled: false }]),
      ),
    },
  });
  t.teardown(() => server.close());
  const client = await server.connect();
  t.teardown(() => client.close());
  const ok = await client.readResource({ uri: 'vault://note/Here.md' });
  t.match(String((ok.contents[0] as { text?: string }).text), /# here/);
  const err = await client.readResource({ uri: 'vault://note/Nowhere.md' }).then(
    () => undefined,
    (e: unknown) => e,
  );
  // server.connect() is a v1 SDK client (McpError); a v2 client rebuilds ResourceNotFoundError from data.uri.
  const pe = err as { code?: number; message: string; data?: Record<string, unknown> };
  t.ok(pe && typeof pe.code === 'number', 'a JSON-RPC error');
  t.not(pe.code, ProtocolErrorCode.InternalError, 'not -32603');
  t.equal(pe.code, ProtocolErrorCode.InvalidParams, '-32602, the SDK wire code for resource-not-found');
  t.equal(pe.data?.uri, 'vault://note/Nowhere.md', 'data.uri names the resource');
  t.match(pe.data?.refusal, { code: 'not_found' }, 'and the typed refusal');
  t.match(pe.message, /Nowhere\.md/);
});
