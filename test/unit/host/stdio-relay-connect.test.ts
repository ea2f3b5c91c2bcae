// How `exocortex stdio` decides between relaying and serving here (src/cli/stdio-relay.ts): nothing at the
// socket path, or a socket file a dead owner left behind, serves here (false); a listener that is not an
// Exocortex server of this protocol is refused with a reason, never relayed to.
import t from 'tap';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { relayStdio } from '../../../src/cli/stdio-relay.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'exo-relay-connect-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('no socket at the path: serve here', async (t) => {
  t.equal(await relayStdio(path.join(dir, 'none.sock'), dir), false);
});

t.test("a dead owner's socket file (nobody listening): serve here", async (t) => {
  const socketPath = path.join(dir, 'dead.sock');
  // A process that listens and is killed before it can remove its socket file, as a crashed server.
  const owner = spawn(process.execPath, [
    '-e',
    `require('node:net').createServer().listen(${JSON.stringify(socketPath)}, () => { require('node:fs').chmodSync(${JSON.stringify(socketPath)}, 0o600); console.log('up'); })`,
  ]);
  await new Promise<void>((resolve) => owner.stdout.once('data', () => resolve()));
  owner.kill('SIGKILL');
  await new Promise((r) => owner.once('exit', r));
  t.ok(existsSync(socketPath), 'the socket file is left behind');
  t.equal(await relayStdio(socketPath, dir), false);
});

t.test('a listener that does not upgrade is refused with its reason', async (t) => {
  const socketPath = path.join(dir, 'other.sock');
  const other = createServer((_req, res) => {
    res.writeHead(409, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ error: { code: 'vault_mismatch', message: 'another vault is served here', exitCode: 2 } }),
    );
  });
  await new Promise<void>((resolve) => other.listen(socketPath, resolve));
  t.teardown(() => new Promise((r) => other.close(r)));
  chmodSync(socketPath, 0o600);
  await t.rejects(relayStdio(socketPath, dir), { code: 'vault_mismatch', message: 'another vault is served here' });
});
