// The keyword rows of a write-through are written in the index's second transaction, after the tool
// has answered (the keyword contributor is deferred). A search right after a write must still find the
// written text: keyword_search and hybrid_search wait for IndexService.settled(). A fixture family's
// slow deferred contributor holds that second transaction open for 400 ms. On PGlite the one connection
// would serialise the search behind it anyway; on a PostgreSQL server (a pool) only settled() does.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { postgresAvailable, startPostgres } from '../../../src/host/testing/postgres-server.js';
import type { IndexService } from '../../../src/sdk/index-service.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const slow = path.resolve(here, '../../fixtures/families/slow-deferred');
type Result = { isError?: boolean; structuredContent?: Record<string, any> };

for (const engine of ['pglite', 'postgres'] as const) {
  const skip = engine === 'postgres' && !postgresAvailable() ? 'PostgreSQL 15 server binaries not installed' : false;
  t.test(`a search right after edit_note finds the appended text (${engine})`, { skip }, async (t) => {
    const pg = engine === 'postgres' ? await startPostgres() : undefined;
    t.teardown(() => pg?.stop());
    const server = await startTestServer({
      files: { 'Log.md': '# Log\n\nfirst entry\n' },
      config: {
        ...(pg ? { database: { url: pg.url } } : {}),
        plugins: [slow],
        families: { files: { enabled: false }, transfer: { enabled: false } },
      },
    });
    t.teardown(() => server.close());
    t.equal(server.host.manager.registry.status.get('slow-deferred')?.state, 'serving');
    const index = server.host.services.named.get('index') as IndexService;
    t.ok(await index.whenReady(server.host.vaultHandle.id, 30_000));
    const client = await server.connect();
    const call = async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as Result;
    for (const [i, word] of ['zanzibarish', 'quixotical'].entries()) {
      const hash = (await call('get_notes_info', { paths: ['Log.md'] })).structuredContent?.notes[0].content_hash;
      const edit = await call('edit_note', {
        path: 'Log.md',
        content: `\nentry ${i}: ${word}\n`,
        append: true,
        expected_hash: hash,
      });
      t.notOk(edit.isError, 'the edit succeeded');
      const kw = await call('keyword_search', { query: word });
      t.same(
        kw.structuredContent?.rows.map((r: { path: string }) => r.path),
        ['Log.md'],
        `keyword_search finds "${word}"`,
      );
      const hy = await call('hybrid_search', { query: word });
      t.same(
        hy.structuredContent?.rows.map((r: { path: string }) => r.path),
        ['Log.md'],
        `hybrid_search finds "${word}"`,
      );
    }
  });
}
