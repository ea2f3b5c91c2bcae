// Hot reload: editing the config file swaps family generations without a restart; connected
// sessions get list_changed; in-flight calls finish on the old generation; a bad file keeps the
// previous generation serving and says why on /health.
import t from 'tap';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { writeFileSync } from 'node:fs';
import { refusalOf } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const echo = path.resolve(here, '../../fixtures/families/echo');

const server = await startTestServer({ builtinDir: null, config: { plugins: [echo] } });
t.teardown(() => server.close());
const client = await server.connect();
let listChanged = 0;
client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
  listChanged++;
});
const toolNames = async () => (await client.listTools()).tools.map((x) => x.name).sort();
const waitFor = async (cond: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  return cond();
};

t.test('a settings change reboots only the family, and calls in flight finish on the old generation', async (t) => {
  // Let the client's standalone SSE stream open before we change anything.
  await new Promise((r) => setTimeout(r, 200));
  const genBefore = server.host.manager.registry.status.get('echo')!.generation;
  const inFlight = client.callTool({ name: 'slow', arguments: { ms: 600 } });
  await new Promise((r) => setTimeout(r, 100));
  await server.rewriteConfig({ echo: { prefix: '#' } });
  const genAfter = server.host.manager.registry.status.get('echo')!.generation;
  t.not(genAfter, genBefore, 'a new generation serves');
  const r = await client.callTool({ name: 'echo', arguments: { text: 'x' } });
  t.equal((r.structuredContent as { text: string }).text, '#x', 'new settings apply at once');
  const slow = await inFlight;
  t.notOk(slow.isError, 'the in-flight call completed on the old generation');
  t.same(slow.structuredContent, { slept: 600 });
  t.ok(await waitFor(() => listChanged >= 1), 'list_changed reached the connected client');
});

t.test('flipping a family off removes its tools and notifies; flipping it back restores them', async (t) => {
  const before = listChanged;
  await server.rewriteConfig({ families: { echo: { enabled: false } } });
  t.same(await toolNames(), []);
  t.ok(await waitFor(() => listChanged > before));
  t.equal(refusalOf(await client.callTool({ name: 'echo', arguments: { text: 'x' } }))!.code, 'unknown_tool');
  await server.rewriteConfig({ families: { echo: { enabled: true, readOnly: true } } });
  const names = await toolNames();
  t.ok(names.includes('echo'));
  t.notOk(names.includes('append_note'), 'read-only family hides write tools');
  t.equal(
    refusalOf(await client.callTool({ name: 'append_note', arguments: { path: 'a.md', text: 'x' } }))!.code,
    'read_only',
  );
  await server.rewriteConfig({ families: { echo: { enabled: true, readOnly: false } } });
  t.ok((await toolNames()).includes('append_note'));
});

t.test('an invalid config keeps the previous generation serving and /health says why', async (t) => {
  const gen = server.host.manager.registry.status.get('echo')!.generation;
  await server.rewriteConfig({ echo: { prefix: 42 } });
  t.equal(server.host.manager.registry.status.get('echo')!.generation, gen, 'old generation kept');
  let health = (await (
    await fetch(`${server.url}/health`, { headers: { authorization: `Bearer ${server.key}` } })
  ).json()) as Record<string, any>;
  t.equal(health.status, 'degraded');
  t.equal(health.reload.ok, false);
  t.match(health.reload.errors.join(' '), /echo\.prefix must be string/);
  t.notOk((await client.callTool({ name: 'echo', arguments: { text: 'y' } })).isError, 'still serving');

  const lastAt = server.host.manager.lastResult!.at;
  writeFileSync(server.configFile, 'vault: [unclosed\n');
  t.ok(await waitFor(() => server.host.manager.lastResult!.at !== lastAt));
  health = (await (
    await fetch(`${server.url}/health`, { headers: { authorization: `Bearer ${server.key}` } })
  ).json()) as Record<string, any>;
  t.match(health.reload.errors.join(' '), /YAML error/);
  t.notOk(JSON.stringify(health).includes(server.dir), 'no paths on /health');
  t.notOk((await client.callTool({ name: 'echo', arguments: { text: 'y' } })).isError, 'still serving');

  await server.rewriteConfig({ echo: { prefix: '' }, bogus: { x: 1 } });
  t.match(server.host.manager.lastResult!.errors.join(' '), /unknown key bogus/);
  await server.rewriteConfig({ echo: { prefix: '' }, bogus: undefined });
  health = (await (
    await fetch(`${server.url}/health`, { headers: { authorization: `Bearer ${server.key}` } })
  ).json()) as Record<string, any>;
  t.equal(health.status, 'ok');
});

t.test('SIGHUP reloads too', async (t) => {
  const version = server.host.manager.registry.version;
  writeFileSync(server.configFile, writeFileSyncConfig(server.configFile, { echo: { prefix: '!' } }));
  // the file watcher may pick this up first; SIGHUP must work either way
  process.kill(process.pid, 'SIGHUP');
  t.ok(await waitFor(() => server.host.manager.registry.version > version));
  const r = await client.callTool({ name: 'echo', arguments: { text: 'z' } });
  t.equal((r.structuredContent as { text: string }).text, '!z');
});

import YAML from 'yaml';
import { readFileSync } from 'node:fs';
function writeFileSyncConfig(file: string, patch: Record<string, unknown>): string {
  return YAML.stringify({ ...(YAML.parse(readFileSync(file, 'utf8')) as object), ...patch });
}
