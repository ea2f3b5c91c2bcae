// After a first index build that nothing wrote through, a note typed while the server was down is a
// `created` event at the next start (the build-from-empty state must end with the build); and a database
// pointed at another vault root says so with one `reset` (the index is rebuilt from the new root).
import t from 'tap';
import { mkdirSync, writeFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { Host } from '../../../src/host/host.js';
import { loadSettings } from '../../../src/host/settings/load.js';
import { createLogger } from '../../../src/host/log/logger.js';
import type { IndexService } from '../../../src/sdk/index-service.js';
import type { Output } from '../../../plugins/change-feed/tools/get_changes.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const config = { plugins: [path.join(root, 'plugins/change-feed')], index: { watch: false, reconcileSeconds: 0 } };
const server = await startTestServer({ builtinDir: null, config, files: { 'one.md': '# One\n', 'two.md': '# Two\n' } });
let host: Host = server.host;
t.teardown(async () => {
  await host.close().catch(() => undefined);
  rmSync(server.dir, { recursive: true, force: true });
});
const index = () => host.services.named.get('index') as IndexService;
await index().whenReady(host.vaultHandle.id);

async function restart(): Promise<Client> {
  await host.close();
  host = await Host.start({
    settings: loadSettings({ file: server.configFile, env: {}, cwd: server.dir }),
    http: true,
    builtinDir: path.join(server.dir, 'no-builtins'),
    log: createLogger('silent'),
  });
  await index().whenReady(host.vaultHandle.id);
  const client = new Client({ name: 'restart', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${host.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${server.key}` } },
    }),
  );
  return client;
}

async function events(client: Client): Promise<string[]> {
  const r = await client.callTool({ name: 'get_changes', arguments: { since: 'ev:0', limit: 500 } });
  return (r.structuredContent as Output).events.map((e) => `${e.kind} ${e.path} by ${e.by}`);
}

t.test('a note created while the server was down is reported at the next start', async (t) => {
  writeFileSync(path.join(server.vaultDir, 'while-down.md'), '# Typed while the server was down\n');
  const client = await restart();
  t.teardown(() => client.close());
  t.same(
    await events(client),
    ['created while-down.md by human/sync'],
    'the first build itemised nothing; the catch-up scan itemises the new note',
  );
});

t.test('a database pointed at another vault root records a reset and indexes the new root', async (t) => {
  const other = path.join(server.dir, 'other-vault');
  mkdirSync(other);
  writeFileSync(path.join(other, 'elsewhere.md'), '# Elsewhere\n');
  const raw = YAML.parse((await import('node:fs')).readFileSync(server.configFile, 'utf8')) as {
    vault: { path: string };
  };
  raw.vault.path = other;
  writeFileSync(server.configFile, YAML.stringify(raw));
  const client = await restart();
  t.teardown(() => client.close());
  t.same(
    (await events(client)).slice(1),
    ['reset  by human/sync'],
    'one reset, no deletions of files that were never removed',
  );
  t.equal(
    Number(
      (
        await host.database.db
          .selectFrom('notes')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('vault_id', '=', host.vaultHandle.id)
          .executeTakeFirstOrThrow()
      ).n,
    ),
    1,
    "only the new root's note is indexed",
  );
});
