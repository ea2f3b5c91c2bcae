// A host closed while its index commits a batch lets that batch finish with the vault still served: a
// contributor asking the index for the vault's status in that transaction (change-feed's does, on a first
// sighting) was refused vault_unavailable, and every note of the batch was quarantined for good.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { Host } from '../../../src/host/host.js';
import { createLogger } from '../../../src/host/log/logger.js';
import { loadSettings } from '../../../src/host/settings/load.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';
import { gate } from '../../fixtures/families/status-on-commit/family.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const config = {
  plugins: [path.join(root, 'test/fixtures/families/status-on-commit')],
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

  host = await Host.start({
    settings: loadSettings({ file: server.configFile, env: {}, cwd: server.dir }),
    builtinDir: path.join(server.dir, 'no-builtins'),
    log: createLogger('silent'),
  });
  const index = host.services.named.get('index') as IndexService;
  t.ok(await index.whenReady(host.vaultHandle.id), 'the next start finishes its pass');
  const status = index.status(host.vaultHandle.id);
  t.equal(status.quarantined, 0, 'no note was quarantined by the close');
  t.equal(status.indexed, 3, 'every note is indexed');
  t.equal(status.failures, 0, 'and nothing failed');
});
