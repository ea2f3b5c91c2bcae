// The worker pool's threads start with the first task that needs one: a restart whose first index pass
// parses nothing (the usual restart) leaves the pool without threads, each of which would hold ~15 MiB
// until given back; notes to parse (the first start's Welcome note, an outside edit) start the bulk lane.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';

const server = await startTestServer({ builtinDir: null, config: { index: { debounceMs: 30 } } });
t.teardown(() => server.close());
const index = () => server.host.services.named.get('index') as IndexService;
const vaultId = () => server.host.vaultHandle.id;

t.test('pool-on-demand: the first start parses its notes in the pool', async (t) => {
  t.equal(await index().whenReady(vaultId(), 30_000), true);
  t.ok(index().status(vaultId()).indexed >= 1, 'the Welcome note is indexed');
  t.ok(server.host.workers.stats().threads >= 1, 'the bulk lane started for it');
});

t.test('pool-on-demand: a restart with nothing new to parse starts no thread', async (t) => {
  await server.restart();
  t.equal(await index().whenReady(vaultId(), 30_000), true);
  await new Promise((r) => setTimeout(r, 500));
  t.equal(server.host.workers.stats().threads, 0, 'no pool thread after the pass');

  const before = index().status(vaultId()).indexed;
  for (let i = 0; i < 3; i++) writeFileSync(path.join(server.vaultDir, `n${i}.md`), `# Note ${i}\n\n[[n${i + 1}]]\n`);
  const deadline = Date.now() + 30_000;
  while (index().status(vaultId()).indexed < before + 3 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
  t.equal(index().status(vaultId()).indexed, before + 3, 'the outside notes are indexed');
  t.ok(server.host.workers.stats().threads >= 1, 'and the bulk lane started for them');
});
