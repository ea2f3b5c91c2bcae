// Reading an existing note needs no database round trip: while another transaction holds the embedded
// database (an index transaction of a 50,000-task note holds it for seconds), read_note of a note that
// exists at the path as given is answered before that transaction ends. A link-style name still resolves
// through the index once the database is free.
import t from 'tap';
import { sql, type Kysely } from 'kysely';
import { textOf } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';

// Budgets raised so that a loaded machine's slow first token count cannot fail the test; only the ordering can.
// The key stays in the verifier's cache for the whole file (verifying a key after its cache time is a query).
const server = await startTestServer({
  files: { 'Tiny.md': '# Tiny\na small note\n', 'deep/Named.md': '# Named\n' },
  config: { workers: { taskTimeoutMs: 300_000 }, tools: { callTimeoutMs: 300_000 }, auth: { keyCacheSeconds: 300 } },
});
t.teardown(() => server.close());
const client = await server.connect();
const db = (server.host as unknown as { database: { db: Kysely<unknown> } }).database.db;
const read = async (path: string) => {
  const r = (await client.callTool({ name: 'read_note', arguments: { path } })) as { isError?: boolean };
  if (r.isError) throw new Error(textOf(r));
  return r as { structuredContent: { path: string; content: string } };
};
await read('Tiny');

t.test('read_note of an existing note is answered while a transaction holds the database', async (t) => {
  let readDone = false;
  let release!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  const holder = db.transaction().execute(async (trx) => {
    await sql`SELECT 1`.execute(trx);
    open();
    // Held until the read below is answered, or a minute (then the assertion fails). The minute's timer is
    // cleared once released: a pending timer kept the file's process alive for that minute after its tests.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([released, new Promise((r) => (timer = setTimeout(r, 60_000)))]);
    clearTimeout(timer);
    return readDone;
  });
  await opened;
  // Where the read path queries the database, this read waits until the holder gives up: the check fails.
  const r = await read('Tiny');
  readDone = true;
  release();
  t.equal(await holder, true, 'the read was answered while the transaction was still open');
  t.equal(r.structuredContent.path, 'Tiny.md');
  t.match(r.structuredContent.content, /a small note/);
});

t.test('a link-style name still resolves through the index', async (t) => {
  const r = await read('Named');
  t.equal(r.structuredContent.path, 'deep/Named.md');
});
