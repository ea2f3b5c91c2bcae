// keyword_search's in-memory index stays current with the stored rows, whoever wrote them: a second index over the
// same database (as a replica's process would hold) takes in a note written and a note removed by this process's
// pipeline through the rows' change stamp, and ranks exactly like the SQL path on what it holds.
import { unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
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
    '健康/Redis 缓存.md': '# Redis 缓存\n\nRedis 的缓存策略：热点数据放在内存里。\n',
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

t.test('CJK bigrams: weights B and C, out of the body GIN index, still found on both paths', async (t) => {
  const row = (
    await sql<{ tsv: string; indexed: string; title: string }>`
      SELECT k.tsv::text AS tsv, ts_filter(k.tsv, '{a,d}')::text AS indexed, k.title_tsv::text AS title
      FROM search_keyword k JOIN notes n ON n.id = k.note_id WHERE n.path = ${'健康/Redis 缓存.md'}`.execute(db)
  ).rows[0];
  t.match(row.tsv, /'缓存':\d+B,\d+C/, 'a bigram in title and body: B in the title, C in the body');
  t.match(row.tsv, /'redi':\d+A,\d+/, 'parsed words keep A and D');
  t.notMatch(row.indexed, /[\u4e00-\u9fff]/u, 'the body index expression holds no CJK lexeme');
  t.match(row.indexed, /'redi'/);
  t.match(row.title, /'缓存':\d+B/, 'the title vector keeps its bigrams');
  // Without the memory index the SQL path finds a body substring, a title bigram and a mixed query, filtered or not.
  for (const q of ['早睡早起', '热点数据', '缓存', 'Redis 缓存策略'])
    t.ok((await paths(q)).length > 0, `SQL path: ${q}`);
  const inFolder = await keywordSearch(db, vaultId, '热点数据', { folder: '健康' }, o);
  t.same(
    inFolder.hits.map((h) => h.path),
    ['健康/Redis 缓存.md'],
    'a filtered CJK query (SQL path)',
  );
  for (const q of ['早睡早起', '缓存', 'Redis 缓存策略'])
    t.same(await paths(q, replica), await paths(q), `both paths: ${q}`);
});

t.test('filtered queries rank on the memory index and agree with the SQL path', async (t) => {
  const ix = replica.indexes.get(vaultId)!;
  const scan = ix.scan.bind(ix);
  let scans = 0;
  ix.scan = ((...args: Parameters<typeof scan>) => {
    scans++;
    return scan(...args);
  }) as typeof ix.scan;
  t.teardown(() => {
    ix.scan = scan;
  });
  const cases: Array<[string, { folder?: string; tags?: string[] }]> = [
    ['热点数据', { folder: '健康' }],
    ['缓存', { folder: '健康' }],
    ['hot keys', { folder: '健康' }],
    ['redis', {}],
    ['redis', { tags: ['nothing-tagged-so'] }],
  ];
  for (const [q, filters] of cases) {
    const before = scans;
    const viaMemory = (await keywordSearch(db, vaultId, q, filters, { ...o, memory: replica })).hits.map((h) => h.path);
    t.equal(scans, before + 1, `ranked on the memory index: ${q} ${JSON.stringify(filters)}`);
    t.same(
      viaMemory,
      (await keywordSearch(db, vaultId, q, filters, o)).hits.map((h) => h.path),
      'as the SQL path',
    );
    if (filters.folder)
      t.ok(
        viaMemory.every((p) => p.startsWith(`${filters.folder}/`)),
        'inside the folder',
      );
  }
  t.same(
    (await keywordSearch(db, vaultId, 'redis', { folder: '健康' }, { ...o, memory: replica })).hits.map((h) => h.path),
    ['健康/Redis 缓存.md'],
  );
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

t.test('a row in the layout before migration 0009 (bigrams at A and D) is still found on both paths', async (t) => {
  await index.settled(vaultId);
  await sql`UPDATE search_keyword k SET
      tsv = setweight(to_tsvector('english', '如何 何保 保持 持健 健康 康'), 'A') || setweight(to_tsvector('english', '每天 天早 早睡 睡早 早起 起 坚持 持锻 锻炼 炼身 身体 体'), 'D')
    FROM notes n WHERE n.id = k.note_id AND n.path = ${'健康/如何保持健康.md'}`.execute(db);
  const fresh = new KeywordMemory(db);
  await fresh.ensure(vaultId);
  for (const q of ['保持健康', '锻炼身体', '早睡']) {
    const sqlPath = await paths(q);
    t.ok(sqlPath.includes('健康/如何保持健康.md'), `SQL path: ${q}`);
    t.same(await paths(q, fresh), sqlPath, `memory path: ${q}`);
  }
  const hit = (await keywordSearch(db, vaultId, '保持健康', {}, { ...o, memory: fresh })).hits[0];
  t.equal(hit?.path, '健康/如何保持健康.md');
  t.match(hit?.explain, /t\+b|t /, 'its title bigrams still count as title');
  fresh.close();
});

t.test('a load cut short by closing, its database gone after, logs no failure and keeps nothing', async (t) => {
  const other = await startTestServer({
    files: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`n${i}.md`, `# Note ${i}\n\nsome words ${i}\n`])),
    config: { families: { files: { enabled: false }, graph: { enabled: false }, tasks: { enabled: false } } },
  });
  const otherVault = other.host.vaultHandle.id;
  t.ok(await (other.host.services.named.get('index') as IndexService).whenReady(otherVault, 60_000));
  const warned: string[] = [];
  const memory = new KeywordMemory(other.host.database.db, { warn: (_o, msg) => warned.push(msg) });
  const loading = memory.ensure(otherVault);
  memory.close();
  await other.close();
  await loading;
  t.same(warned, [], 'no "load failed" warning for a load the close cut short');
  t.equal(memory.indexes.size, 0, 'nothing kept after the close');
});
