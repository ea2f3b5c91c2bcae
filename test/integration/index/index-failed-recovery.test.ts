// Notes quarantined as index_failed (a database or family refusal, not their own bytes) must not stay out of
// the index for a cause that has passed. A host closed while its index commits a batch lets that batch
// finish with the vault still served: a contributor asking the index for the vault's status in that
// transaction (change-feed's does, on a first sighting) was refused vault_unavailable, and every note of
// the batch was quarantined for good. And a note a family refused is tried again at the next start.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { Host } from '../../../src/host/host.js';
import { createLogger } from '../../../src/host/log/logger.js';
import { loadSettings } from '../../../src/host/settings/load.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';
import { failing, gate } from '../../fixtures/families/probe-contributor/family.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const config = {
  plugins: [path.join(root, 'test/fixtures/families/probe-contributor')],
  index: { watch: false, reconcileSeconds: 0 },
};

t.test('closing under a commit quarantines nothing; the next start finds every note indexed', async (t) => {
  const server = await startTestServer({
    builtinDir: null,
    config,
    files: { 'one.md': '# One\n', 'two.md': '# Two\n', 'three.md': '# Three\n' },
  });
  let host: Host = server.host;
  t.teardown(async () => {
    await host.close().catch(() => undefined);
    rmSync(server.dir, { recursive: true, force: true });
  });
  await gate.entered;
  const closing = host.close();
  await new Promise((r) => setImmediate(r));
  gate.open();
  await closing;

  host = await restart(server);
  const status = indexStatus(host);
  t.equal(status.quarantined, 0, 'no note was quarantined by the close');
  t.equal(status.indexed, 3, 'every note is indexed');
  t.equal(status.failures, 0, 'and nothing failed');
});

t.test('a note a family refused is indexed at the next start once the family takes it', async (t) => {
  gate.open();
  failing.add('two.md');
  t.teardown(() => failing.clear());
  const server = await startTestServer({
    builtinDir: null,
    config,
    files: { 'one.md': '# One\n', 'two.md': '# Two\n' },
  });
  let host: Host = server.host;
  t.teardown(async () => {
    await host.close().catch(() => undefined);
    rmSync(server.dir, { recursive: true, force: true });
  });
  await (host.services.named.get('index') as IndexService).whenReady(host.vaultHandle.id);
  t.equal(indexStatus(host).quarantined, 1, 'refused: quarantined');
  await host.close();

  failing.clear();
  host = await restart(server);
  t.same(
    [indexStatus(host).quarantined, indexStatus(host).indexed],
    [0, 2],
    'the unchanged note is tried again and indexed',
  );
});

async function restart(server: { configFile: string; dir: string }): Promise<Host> {
  const host = await Host.start({
    settings: loadSettings({ file: server.configFile, env: {}, cwd: server.dir }),
    builtinDir: path.join(server.dir, 'no-builtins'),
    log: createLogger('silent'),
  });
  await (host.services.named.get('index') as IndexService).whenReady(host.vaultHandle.id);
  return host;
}

function indexStatus(host: Host) {
  return (host.services.named.get('index') as IndexService).status(host.vaultHandle.id);
}
