// A database connection that could not be made or died under a call is told apart from a statement the
// database refused: the first is answered with a retryable refusal, the second stays an error.
import t from 'tap';
import net from 'node:net';
import pg from 'pg';
import { databaseUnavailable, isDatabaseUnavailable } from '../../../../src/host/db/unavailable.js';
import { freePort } from '../../../../src/host/testing/free-port.js';

t.test('a refused connection (nothing listens) is the database being unavailable', async (t) => {
  const port = await freePort();
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'x', database: 'x' });
  const e = await client.connect().then(
    () => undefined,
    (err: unknown) => err,
  );
  t.ok(e instanceof Error, 'the connect failed');
  t.ok(isDatabaseUnavailable(e), `classified as unavailable (${(e as Error).message})`);
});

t.test('a connection the server ends mid-session is the database being unavailable', async (t) => {
  // A loopback "server" that accepts the connection and closes it at once, as a restarting PostgreSQL does.
  const server = net.createServer((socket) => socket.destroy());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const port = (server.address() as net.AddressInfo).port;
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'x', database: 'x' });
  client.on('error', () => undefined);
  const e = await client.connect().then(
    () => undefined,
    (err: unknown) => err,
  );
  t.ok(e instanceof Error, 'the connect failed');
  t.ok(isDatabaseUnavailable(e), `classified as unavailable (${(e as Error).message})`);
});

t.test('SQLSTATE classes: connection exceptions and shutdowns yes, refused statements no', async (t) => {
  const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });
  for (const code of ['08006', '08001', '57P01', '57P02', '57P03'])
    t.ok(isDatabaseUnavailable(withCode(code)), `${code} is unavailable`);
  for (const code of ['42601', '23505', '40001', '57014', '42P01'])
    t.notOk(isDatabaseUnavailable(withCode(code)), `${code} is not`);
  t.notOk(isDatabaseUnavailable(new Error('syntax error at or near "x"')));
  t.notOk(isDatabaseUnavailable('Connection terminated unexpectedly'), 'only errors count');
});

t.test('the refusal is retryable and says a write may have landed', async (t) => {
  const r = databaseUnavailable();
  t.equal(r.code, 'service_unavailable');
  t.equal(r.retryable, true);
  t.match(r.message, /database.*read before writing again/);
});
