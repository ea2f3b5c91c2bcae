// The keyword rows' vectors are stored out of line uncompressed (search migration 0010): a long note's vector is
// toasted without a compression attempt, reads back as the one its text derives, and its words are found.
import { sql } from 'kysely';
import t from 'tap';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';

type ToolResult = { isError?: boolean; structuredContent?: { rows?: Array<{ path: string }> } };

// ~1,500 distinct words: a vector of several kilobytes, well past the ~2 kB where PostgreSQL toasts a value.
const words = Array.from({ length: 1500 }, (_, i) => `w${i.toString(36)}x${(i * 7919).toString(36)}`);
const server = await startTestServer({
  files: {
    'Long.md': `# Long note\n\n${words.join(' ')} zanzibarlastword\n`,
    'Short.md': '# Short\n\nA short note about zanzibar.\n',
  },
  config: { families: { files: { enabled: false }, graph: { enabled: false }, tasks: { enabled: false } } },
});
t.teardown(() => server.close());
const vaultId = server.host.vaultHandle.id;
const db = server.host.database.db;
t.ok(await (server.host.services.named.get('index') as IndexService).whenReady(vaultId, 60_000), 'indexed');

t.test('the vector columns are stored out of line, uncompressed', async (t) => {
  const { rows } = await sql<{ attname: string; attstorage: string }>`
    SELECT attname, attstorage FROM pg_attribute
    WHERE attrelid = 'search_keyword'::regclass AND attname IN ('tsv', 'title_tsv') ORDER BY attname`.execute(db);
  t.same(rows, [
    { attname: 'title_tsv', attstorage: 'e' },
    { attname: 'tsv', attstorage: 'e' },
  ]);
});

t.test(
  "a long note's vector: toasted, not compressed, equal to the one its text derives, and searchable",
  async (t) => {
    const row = (
      await sql<{ bytes: number; compression: string | null; lexemes: number; same: boolean }>`
      SELECT pg_column_size(k.tsv) AS bytes, pg_column_compression(k.tsv) AS compression, length(k.tsv) AS lexemes,
             k.tsv = (setweight(to_tsvector('english', k.title_text), 'A') || setweight(to_tsvector('english', k.body), 'D')) AS same
      FROM search_keyword k JOIN notes n ON n.id = k.note_id WHERE n.path = 'Long.md'`.execute(db)
    ).rows[0];
    t.ok(row.bytes > 4000, `the vector is ${row.bytes} bytes`);
    t.equal(row.compression, null, 'stored without compression');
    t.ok(row.lexemes > 1500, `${row.lexemes} lexemes`);
    t.ok(row.same, 'the stored vector is the one its text derives');
    const client = await server.connect();
    const r = (await client.callTool({
      name: 'keyword_search',
      arguments: { query: 'zanzibarlastword' },
    })) as ToolResult;
    t.same(
      (r.structuredContent?.rows ?? []).map((h) => h.path),
      ['Long.md'],
      'its last word is found',
    );
  },
);
