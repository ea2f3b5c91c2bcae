// keyword_search's in-memory index stays current with the stored rows, whoever wrote them: a second index over the
// same database (as a replica's process would hold) takes in a note written and a note removed by this process's
// pipeline through the rows' change stamp, and ranks exactly like the SQL path on what it holds.
import { unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { KeywordMemory } from '../../../plugins/search/keyword/memory-index.js';
import { keywordSearch } from '../../../plugins/search/keyword/search.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';

const server = await startTestServer({
  files: {
    'Redis.md': '# Redis\n\nRedis caching keeps hot keys in memory; eviction policies decide what goes.\n',
    'Memcached.md': '# Memcached\n\nThe memcached slabs evict hot keys when memory runs out.\n',
    '健康/如何保持健康.md': '# 如何保持健康\n\n每天早睡早起，坚持锻炼身体。\n',
  },
  config: {
    families: {
      files: { enabled: false },
      graph: { enabled: false },
      tasks: { enabled: false },
      notes: { enabled: false },
    },
  },
});
t.teardown(() => server.close());
const vaultId = server.host.vaultHandle.id;
const index = server.host.services.named.get('index') as IndexService;
const db = server.host.database.db;
const replica = new KeywordMemory(db);
const o = {
  configs: ['english'],
  limit: 10,
  candidates: 800,
  snippetRows: 5,
  snippetChars: 200,
  snippetScanChars: 20_000,
  fill: true,
};
const paths = async (q: string, memory?: KeywordMemory) =>
  (await keywordSearch(db, vaultId, q, {}, { ...o, ...(memory ? { memory } : {}) })).hits.map((h) => h.path);

t.test('the memory index answers like the SQL path', async (t) => {
  t.ok(await index.whenReady(vaultId, 60_000), 'the index finished its initial scan');
  await replica.ensure(vaultId);
  t.ok(replica.indexes.get(vaultId)?.loaded, 'loaded from the stored vectors');
  for (const q of ['hot keys', 'What do my notes say about Redis caching?', '保持健康', 'memcached OR redis'])
    t.same(await paths(q, replica), await paths(q), q);
});

t.test('a note written and one removed by the pipeline reach the other index through the change stamp', async (t) => {
  const before = replica.indexes.get(vaultId)!.rev;
  writeFileSync(
    path.join(server.vaultDir, 'Valkey.md'),
    '# Valkey\n\nValkey is a fork that keeps hot keys like Redis does.\n',
  );
  unlinkSync(path.join(server.vaultDir, 'Memcached.md'));
  for (let i = 0; i < 200; i++) {
    await index.settled(vaultId);
    const p = await paths('hot keys');
    if (p.includes('Valkey.md') && !p.includes('Memcached.md')) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  t.same(await paths('hot keys'), await paths('hot keys', replica), 'the replica agrees with the stored rows');
  t.ok((await paths('valkey', replica)).includes('Valkey.md'), 'the new note is found');
  t.notOk((await paths('memcached', replica)).includes('Memcached.md'), 'the removed note is gone');
  t.ok(replica.indexes.get(vaultId)!.rev > before, 'it caught up by the stamp');
});
