// Runs @modelcontextprotocol/conformance's server scenarios against the real server (stateful HTTP),
// through a loopback proxy that adds the bearer key the suite cannot send. The baseline lists the
// scenarios that need the suite's own fixture server; everything else must pass.
import t from 'tap';
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer } from '../../src/host/testing/harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const echo = path.resolve(here, '../fixtures/families/echo');

const server = await startTestServer({ builtinDir: null, config: { plugins: [echo] } });
const target = new URL(server.url);
const proxy = http.createServer((req, res) => {
  const upstream = http.request(
    { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, authorization: `Bearer ${server.key}` } },
    (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    },
  );
  upstream.on('error', () => res.destroy());
  req.pipe(upstream);
});
await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
t.teardown(async () => {
  proxy.closeAllConnections();
  proxy.close();
  await server.close();
});

t.test('conformance server scenarios pass, except the documented baseline', async (t) => {
  const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
  // Run asynchronously so this process keeps serving while the suite talks to it.
  const child = spawn(process.execPath, [path.join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js'), 'server', '--url', url, '--expected-failures', path.join(here, 'baseline.yml'), '-o', path.join(os.tmpdir(), `exo-conformance-${process.pid}`)], { cwd: root });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? 1)));
  const summary = out.slice(out.indexOf('=== SUMMARY ==='));
  t.equal(code, 0, summary);
  for (const scenario of ['server-initialize', 'ping', 'tools-list', 'tools-call-error', 'logging-set-level', 'resources-list', 'prompts-list', 'dns-rebinding-protection', 'server-sse-multiple-streams']) {
    t.match(summary, new RegExp(`✓ ${scenario}:`), `${scenario} passes`);
  }
});
