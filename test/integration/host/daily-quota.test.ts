// The daily quota is counted in the database: a restart forgets nothing, and concurrent calls cannot
// pass the limit between a read and a write (one upsert refuses past it).
import t from 'tap';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer } from '../../../src/host/testing/harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const echo = path.resolve(here, '../../fixtures/families/echo');

const refusalCode = (result: unknown) => {
  const r = result as { isError?: boolean; content?: unknown };
  return r.isError
    ? /MCP-REFUSAL \{"code":"([a-z_]+)"/.exec(JSON.stringify(r.content).replace(/\\"/g, '"'))?.[1]
    : undefined;
};

t.test('a key over its daily quota stays refused across a restart; parallel calls never pass it', async (t) => {
  const server = await startTestServer({
    builtinDir: null,
    config: { plugins: [echo], admission: { dailyQuota: 5 } },
  });
  t.teardown(() => server.close());
  let client = await server.connect();
  const results = await Promise.all(
    Array.from({ length: 12 }, () => client.callTool({ name: 'echo', arguments: { text: 'q' } })),
  );
  const admitted = results.filter((r) => !r.isError).length;
  t.equal(admitted, 5, 'exactly the quota admitted out of 12 parallel calls');
  t.equal(results.filter((r) => refusalCode(r) === 'quota_exceeded').length, 7, 'the rest refused as quota_exceeded');
  await server.restart();
  client = await server.connect();
  const after = await client.callTool({ name: 'echo', arguments: { text: 'q' } });
  t.equal(refusalCode(after), 'quota_exceeded', 'still refused after a restart');
  const other = await server.connect({ key: server.readKey });
  const fresh = await other.callTool({ name: 'echo', arguments: { text: 'q' } });
  t.notOk(fresh.isError, "another key's quota is its own");
});
