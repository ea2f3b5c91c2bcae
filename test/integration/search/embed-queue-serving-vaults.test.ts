// The embedding loop takes the queue rows of the vaults this process serves, and only those. A row of a vault that
// is not served here (its root gone, or another process owns it) is left as it is, neither read nor backed off, so
// whoever serves that vault embeds it at once; once the vault is served here again, its rows are embedded.
import t from 'tap';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { AdminClient } from '../../../src/host/admin/channel-client.js';
import type { EmbeddingWorker } from '../../../plugins/search/embeddings/service.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { Database } from '../../../src/sdk/index.js';
import { fakeEmbeddingSettings, startEmbeddingServer, waitEmbedded } from './embedding-server.js';

t.setTimeout(120_000);

const tmp = mkdtempSync(path.join(os.tmpdir(), 'exo-embed-serving-'));
const rootY = path.join(tmp, 'y');
mkdirSync(rootY);
writeFileSync(path.join(rootY, 'Ferns.md'), '# Ferns\n\nKeep the fern in indirect light and mist it daily.\n');
writeFileSync(path.join(rootY, 'Moss.md'), '# Moss\n\nMoss grows on the north side of the stones.\n');

const fake = await startEmbeddingServer(64);
const server = await startTestServer({
  files: {
    'Tomatoes.md': '# Tomatoes\n\nWater the tomato plants deeply twice a week.\n',
    'Roses.md': '# Roses\n\nPrune rose bushes in early spring.\n',
  },
  config: {
    index: { rootCheckSeconds: 0 },
    search: { embedding: fakeEmbeddingSettings(fake) },
    families: { files: { enabled: false }, graph: { enabled: false }, tasks: { enabled: false } },
  },
});
const admin = (await AdminClient.connect(server.host.admin!.socketPath))!;
t.teardown(async () => {
  admin.close();
  await server.close();
  await fake.close();
  rmSync(tmp, { recursive: true, force: true });
});

const db = () => server.host.services.named.get('db') as Database;
const embeddings = () => server.host.manager.registry.providedService('embeddings') as EmbeddingWorker;
const mainId = server.host.vaultHandle.id;
const served = (name: string) => server.host.vaults.all().find((v) => v.row.name === name);
const waitIndexed = async (name: string) => {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = served(name);
    if (v?.index?.status().ready && v.index.status().pending === 0) return;
    if (Date.now() > deadline) throw new Error(`${name} not indexed`);
    await new Promise((r) => setTimeout(r, 50));
  }
};
const queueRows = async (vaultId: number) =>
  (
    await sql<{ attempts: number; last_error: string | null }>`
      SELECT attempts, last_error FROM search_embed_queue WHERE vault_id = ${vaultId} ORDER BY note_id`.execute(db())
  ).rows;
/** Queue every note of a vault again, due now (what a `reembed` does). */
const requeue = (vaultId: number) =>
  sql`INSERT INTO search_embed_queue (note_id, vault_id, content_hash)
        SELECT id, vault_id, content_hash FROM notes WHERE vault_id = ${vaultId}
      ON CONFLICT (note_id) DO UPDATE SET attempts = 0, next_attempt_at = now(), last_error = NULL`.execute(db());

let yId = 0;

t.test('both vaults served: every note of each is embedded', async (t) => {
  const added = await admin.post<{ vault: { status: { state: string } } }>('/v1/vaults', {
    name: 'yvault',
    root: rootY,
  });
  t.equal(added.vault.status.state, 'serving');
  yId = served('yvault')!.row.id;
  await waitIndexed('vault');
  await waitIndexed('yvault');
  t.equal((await waitEmbedded(() => embeddings().counts(mainId), 2)).embedded, 2);
  t.equal((await waitEmbedded(() => embeddings().counts(yId), 2)).embedded, 2);
});

t.test("a vault not served here: its rows wait untouched while the served vault's are embedded", async (t) => {
  renameSync(rootY, `${rootY}.away`);
  await server.host.vaults.check();
  t.equal(served('yvault')?.state, 'unavailable');
  await requeue(yId);
  await requeue(mainId);
  await embeddings().drain();
  t.same(await queueRows(mainId), [], "the served vault's notes are embedded");
  // The loop keeps polling (every 20 ms here): several passes go by without touching the other vault's rows.
  await new Promise((r) => setTimeout(r, 300));
  t.same(
    await queueRows(yId),
    [
      { attempts: 0, last_error: null },
      { attempts: 0, last_error: null },
    ],
    'neither read nor backed off',
  );
  const c = await embeddings().counts(yId);
  t.equal(c.failing, 0, 'nothing reported failing');
});

t.test('served again: its rows are embedded', async (t) => {
  renameSync(`${rootY}.away`, rootY);
  await server.host.vaults.check();
  await waitIndexed('yvault');
  t.equal(served('yvault')?.state, 'serving');
  const c = await waitEmbedded(() => embeddings().counts(yId), 2);
  t.equal(c.queued, 0);
  t.equal(c.failing, 0);
});
