// The quantized strategy on embedded PGlite: chosen by auto, its bits table filled by the trigger as notes
// are embedded and emptied by a note's delete, answers matching the exact scan (plain, filtered through the
// bits or exactly, similar notes), k notes even from one candidate per wanted note, and the trigger's upkeep
// when the setting changes.
import { sql } from 'kysely';
import t from 'tap';
import type { EmbeddingWorker } from '../../../plugins/search/embeddings/service.js';
import { exactVectorSearch } from '../../../plugins/search/embeddings/vector-search.js';
import { quantizedQuery, quantizedVectorSearch } from '../../../plugins/search/embeddings/vector-search-quantized.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';
import {
  fakeEmbeddingSettings,
  hashVector,
  startEmbeddingServer,
  waitEmbedded as waitEmbeddedFor,
} from './embedding-server.js';

const DIMS = 64;
const files: Record<string, string> = {
  'Garden/Tomatoes.md':
    '# Tomatoes\n\nIntro line.\n\n## Watering\n\nWater the tomato plants deeply twice a week in summer heat.\n\n## Pests\n\nAphids and hornworms eat the leaves.\n',
  'Garden/Roses.md': '# Roses\n\nPrune rose bushes in early spring before new growth.\n',
  'Garden/Beans.md': '# Beans\n\nWater the bean rows every morning; pick the pods young.\n',
  'Kitchen/Bread.md': '# Bread\n\nKnead the dough, let it rise, bake the loaf at high heat.\n',
  'Kitchen/Soup.md': '# Soup\n\nSimmer tomato soup with basil and garlic.\n',
  'Kitchen/Salad.md': '# Salad\n\nSlice tomato and cucumber, dress with oil and vinegar.\n',
  'Work/Meetings.md': '# Meetings\n\nWeekly planning meeting agenda and notes.\n',
  'Work/Budget.md': '# Budget\n\nWeekly budget planning for the finance team.\n',
};
const fake = await startEmbeddingServer(DIMS);
const embedding = fakeEmbeddingSettings(fake, DIMS, { batchSize: 8 });
const families = {
  files: { enabled: false },
  graph: { enabled: false },
  tasks: { enabled: false },
  notes: { enabled: false },
  transfer: { enabled: false },
};
const server = await startTestServer({ files, config: { families, search: { embedding } } });
t.teardown(async () => {
  await server.close();
  await fake.close();
});
const db = server.host.database.db;
const vaultId = server.host.vaultHandle.id;
const index = server.host.services.named.get('index') as IndexService;
await index.whenReady(vaultId, 60_000);
const svc = () => server.host.manager.registry.providedService('embeddings') as EmbeddingWorker;
const exact = exactVectorSearch(db, 64);
const notes = Object.keys(files).length;

const waitEmbedded = (n: number) => waitEmbeddedFor(() => svc().counts(vaultId), n);
async function rowCounts(): Promise<{ chunks: number; bits: number; badLength: number }> {
  const r = await sql<{
    chunks: number;
    bits: number;
    bad: number;
  }>`SELECT (SELECT count(*)::int FROM search_chunks) AS chunks,
    (SELECT count(*)::int FROM search_chunk_bits) AS bits,
    (SELECT count(*)::int FROM search_chunk_bits WHERE length(bits) <> ${DIMS}) AS bad`.execute(db);
  return { chunks: r.rows[0].chunks, bits: r.rows[0].bits, badLength: r.rows[0].bad };
}
const noteId = async (p: string) =>
  Number((await sql<{ id: string }>`SELECT id FROM notes WHERE path = ${p}`.execute(db)).rows[0].id);
const paths = (rows: Array<{ path: string }>) => rows.map((r) => r.path);

await waitEmbedded(notes);

t.test('auto on PGlite serves with the quantized scan, reported on /health', async (t) => {
  t.equal(server.host.database.engine.kind, 'pglite');
  t.equal(svc().vectors.strategy, 'quantized');
  const health = (await (
    await fetch(`${server.url}/health`, { headers: { authorization: `Bearer ${server.key}` } })
  ).json()) as {
    familyHealth?: Record<string, Record<string, unknown>>;
  };
  t.equal(health.familyHealth?.search?.vectorSearch, 'quantized');
});

t.test('the trigger fills one bit per dimension for every chunk written', async (t) => {
  const c = await rowCounts();
  t.ok(c.chunks >= notes, 'every note has chunks');
  t.equal(c.bits, c.chunks, 'one bits row per chunk');
  t.equal(c.badLength, 0, `every row holds ${DIMS} bits`);
  const same = await sql<{
    n: number;
  }>`SELECT count(*)::int AS n FROM search_chunks c JOIN search_chunk_bits b USING (note_id, ordinal)
    WHERE b.bits = binary_quantize(c.embedding)::varbit AND b.vault_id = c.vault_id`.execute(db);
  t.equal(same.rows[0].n, c.chunks, 'the bits are binary_quantize of the stored vector');
});

t.test('semantic_search answers what the exact scan answers', async (t) => {
  const client = await server.connect();
  for (const query of ['water the tomato plants deeply', 'weekly planning meeting', 'bake the loaf', 'tomato']) {
    const v = hashVector(query, DIMS);
    const want = await exact.nearest(vaultId, v, 5, {});
    const got = await svc().nearestNotes(vaultId, { vector: v }, 5);
    t.same(paths(got), paths(want), `same notes in the same order: ${query}`);
    t.same(
      got.map((r) => r.similarity),
      want.map((r) => r.similarity),
      'exact similarities after the re-rank',
    );
    t.same(
      got.map((r) => r.sectionOrdinal),
      want.map((r) => r.sectionOrdinal),
      'same best chunk',
    );
  }
  const sem = (
    await client.callTool({ name: 'semantic_search', arguments: { query: 'water the tomato plants deeply', limit: 3 } })
  ).structuredContent as { semantic: string; rows: Array<{ path: string; section: string }> };
  t.equal(sem.semantic, 'ok');
  t.equal(sem.rows[0].path, 'Garden/Tomatoes.md');
  t.equal(sem.rows[0].section, '§ "Tomatoes/Watering" (#2)');
});

t.test(
  'a folder filter ranks only that folder, as exact does, through the bits and through the exact scan',
  async (t) => {
    const v = hashVector('water the tomato', DIMS);
    const want = paths(await exact.nearest(vaultId, v, 10, { folder: 'Kitchen' }));
    t.ok(want.length > 0 && want.every((p) => p.startsWith('Kitchen/')), 'Kitchen/ only');
    const throughBits = quantizedVectorSearch(db, { candidatesPerNote: 40, exactBelow: 0, maxChunksPerNote: 64 });
    t.same(
      paths(await throughBits.nearest(vaultId, v, 10, { folder: 'Kitchen' })),
      want,
      'the quantized query joined to notes',
    );
    t.same(
      paths(await svc().nearestNotes(vaultId, { vector: v }, 10, { folder: 'Kitchen' })),
      want,
      'as shipped: a filter this small is ranked exactly',
    );
    t.same(
      paths(await throughBits.nearest(vaultId, v, 10, { folder: 'Nowhere' })),
      [],
      'an empty folder answers nothing',
    );
    const client = await server.connect();
    const sem = (
      await client.callTool({ name: 'semantic_search', arguments: { query: 'water the tomato', folder: 'Work' } })
    ).structuredContent as { rows: Array<{ path: string }> };
    t.same(new Set(paths(sem.rows)), new Set(['Work/Meetings.md', 'Work/Budget.md']));
  },
);

t.test('similar notes by a note id: the note left out, the rest as exact ranks them', async (t) => {
  const id = await noteId('Garden/Tomatoes.md');
  const got = await svc().nearestNotes(vaultId, { noteId: id }, 4);
  t.equal(got.length, 4);
  t.notOk(
    got.some((r) => r.noteId === id),
    'the note itself is left out',
  );
  t.same(paths(got), paths(await exact.nearest(vaultId, { noteId: id }, 4, {})));
  const missing = await svc().nearestNotes(vaultId, { noteId: 987654 }, 4);
  t.same(missing, [], 'a note without chunks has no neighbours');
});

t.test('one candidate per wanted note still yields k notes (growing limit), re-ranked exactly', async (t) => {
  const narrow = quantizedVectorSearch(db, { candidatesPerNote: 1, exactBelow: 0, maxChunksPerNote: 64 });
  const v = hashVector('tomato water garden', DIMS);
  const got = await narrow.nearest(vaultId, v, 5, {});
  t.equal(got.length, 5, 'five notes although the first try took five chunks');
  const first = await quantizedQuery(vaultId, v, 5, {}, 5).execute(db);
  t.equal(first.rows[0]?.candidates, 5, 'the first try is capped at k × candidatesPerNote chunks');
  const want = new Map((await exact.nearest(vaultId, v, notes, {})).map((r) => [r.noteId, r.similarity]));
  for (const r of got) t.equal(r.similarity, want.get(r.noteId), `${r.path}: exact similarity`);
});

t.test('deleting a note removes its bits (cascade through its chunks)', async (t) => {
  const id = await noteId('Kitchen/Salad.md');
  const before = await sql<{
    n: number;
  }>`SELECT count(*)::int AS n FROM search_chunk_bits WHERE note_id = ${id}`.execute(db);
  t.ok(before.rows[0].n > 0);
  await server.host.vaultHandle.fs.unlink('Kitchen/Salad.md');
  await index.noteRemoved(vaultId, 'Kitchen/Salad.md');
  const after = await sql<{
    n: number;
  }>`SELECT count(*)::int AS n FROM search_chunk_bits WHERE note_id = ${id}`.execute(db);
  t.equal(after.rows[0].n, 0);
  const c = await rowCounts();
  t.equal(c.bits, c.chunks);
});

t.test('a re-embedded note replaces its bits', async (t) => {
  await server.host.vaultHandle.fs.replace(
    'Garden/Roses.md',
    Buffer.from('# Roses\n\nPrune rose bushes in late winter.\n\n## Feeding\n\nFeed roses with compost.\n'),
  );
  await index.noteWritten(vaultId, 'Garden/Roses.md');
  await svc().drain();
  await waitEmbedded(notes - 1);
  const c = await rowCounts();
  t.equal(c.bits, c.chunks);
  const rows = await svc().nearestNotes(vaultId, { vector: hashVector('feed roses with compost', DIMS) }, 1);
  t.equal(rows[0]?.path, 'Garden/Roses.md');
});

t.test('switching to exact drops the trigger and empties the table; back to auto refills it', async (t) => {
  const trigger = async () =>
    (
      await sql<{
        n: number;
      }>`SELECT count(*)::int AS n FROM pg_trigger WHERE tgname = 'search_chunk_bits_sync'`.execute(db)
    ).rows[0].n;
  await server.rewriteConfig({ search: { embedding, vectorIndex: 'exact' } });
  t.equal(svc().vectors.strategy, 'exact');
  t.equal(await trigger(), 0);
  t.equal((await rowCounts()).bits, 0);
  await server.rewriteConfig({ search: { embedding, vectorIndex: 'auto' } });
  t.equal(svc().vectors.strategy, 'quantized');
  t.equal(await trigger(), 1);
  const c = await rowCounts();
  t.ok(c.chunks > 0);
  t.equal(c.bits, c.chunks, 'backfilled from the stored vectors');
});
