// keyword_search ranking for natural-language questions and CJK text, end to end (real host, index pipeline and
// MCP client on a copy of a corpus vault): rare body terms outweigh a common title word, question words are not
// evidence, Chinese substrings and questions find their notes, and each row explains its ranking.
import t from 'tap';
import { corpus as corpusPath } from '../../fixtures/corpus.js';
import { textOf } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';

type ToolResult = { isError?: boolean; content?: unknown; structuredContent?: unknown };
type Row = { path: string; match: string; terms: string; matched_in: string[]; why?: string; snippet?: string };

// Twelve notes whose titles hold one common word of the question, and one whose body holds its rare words.
const distractors = Object.fromEntries(
  Array.from({ length: 12 }, (_, i) => [
    `Extra/Policy review ${i + 1}.md`,
    `# Policy review ${i + 1}\n\nQuarterly review of the travel policy and expense policy, meeting notes.\n`,
  ]),
);
const server = await startTestServer({
  copyVaultFrom: corpusPath('obsidian-tasks-docs'),
  files: {
    ...distractors,
    'Extra/Server tuning log.md':
      '# Server tuning log\n\nThe memcached slabs were evicting hot keys, so the eviction settings now keep the slab allocator from reassigning pages.\n',
    'Extra/养生/如何保持健康.md': '# 如何保持健康\n\n每天早睡早起，坚持锻炼身体。\n',
    'Extra/养生/膳食记录.md': '# 膳食记录\n\n推荐每天盐少于5克，油25到30克，多吃蔬菜。\n',
    'Extra/养生/运动计划.md': '# 运动计划\n\n每周跑步三次，每次三十分钟。\n',
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
const index = server.host.services.named.get('index') as IndexService;
const ready = await index.whenReady(server.host.vaultHandle.id, 60_000);
const client = await server.connect();
t.ok(ready, 'the index finished its initial scan');

async function search(name: string, args: Record<string, unknown>) {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  if (r.isError) t.fail(textOf(r));
  return {
    out: r.structuredContent as { rows: Row[]; ignored_words?: string[]; results?: Array<{ id: string }> },
    text: textOf(r),
  };
}

t.test('a question answered by rare body terms outranks notes whose titles hold one common word of it', async (t) => {
  const { out } = await search('keyword_search', {
    query: 'Which eviction policy keeps memcached slabs from reassigning pages?',
    limit: 10,
  });
  t.equal(out.rows[0]?.path, 'Extra/Server tuning log.md');
  t.equal(out.rows[0]?.match, 'any', 'no note holds every term, so the best partial match leads');
  const hybrid = await search('hybrid_search', {
    query: 'Which eviction policy keeps memcached slabs from reassigning pages?',
  });
  t.equal(hybrid.out.rows[0]?.path, 'Extra/Server tuning log.md', 'hybrid without a provider inherits the ranking');
  const connector = await search('search', {
    query: 'Which eviction policy keeps memcached slabs from reassigning pages?',
  });
  t.equal(connector.out.results?.[0]?.id, 'Extra/Server tuning log.md', 'so does the connector search');
});

t.test('question words are not evidence: the question matches like its content words', async (t) => {
  const { out, text } = await search('keyword_search', { query: 'What do my notes say about memcached?' });
  t.same(out.ignored_words, ['What', 'do', 'my', 'notes', 'say', 'about']);
  t.equal(out.rows[0]?.path, 'Extra/Server tuning log.md');
  t.equal(out.rows[0]?.match, 'all');
  t.equal(out.rows[0]?.terms, '1/1');
  t.match(text, /ignored \(no evidence\): What do my notes say about/);
});

t.test('each row explains which terms matched where and what they weighed', async (t) => {
  const { out, text } = await search('keyword_search', { query: 'memcached eviction policy', limit: 5 });
  const top = out.rows[0];
  t.equal(top.path, 'Extra/Server tuning log.md');
  t.match(top.why, /^(memcached|eviction) b \d+\.\d\d · /);
  t.match(
    top.why,
    /memcached b .* · eviction b |eviction b .* · memcached b /,
    'every matched term is listed, heaviest first',
  );
  t.notMatch(top.why, /policy/, 'an unmatched term is not');
  t.match(text, /^ {3}why: /m);
  const title = out.rows.find((r) => r.path.startsWith('Extra/Policy review'));
  t.match(title?.why, /policy t\+b/);
});

t.test('a substring of a Chinese phrase finds the note', async (t) => {
  const { out } = await search('keyword_search', { query: '保持健康' });
  t.same(
    out.rows.map((r) => r.path),
    ['Extra/养生/如何保持健康.md'],
  );
  const body = await search('keyword_search', { query: '坚持锻炼' });
  t.equal(body.out.rows[0]?.path, 'Extra/养生/如何保持健康.md');
  t.match(body.out.rows[0]?.snippet, /«坚持»|«锻炼»/, 'the snippet marks the Chinese words');
});

t.test('a Chinese question finds the note that answers it', async (t) => {
  const { out } = await search('keyword_search', { query: '每天应该吃多少盐和油？', limit: 5 });
  t.equal(out.rows[0]?.path, 'Extra/养生/膳食记录.md');
  t.ok(out.ignored_words?.includes('应该') && out.ignored_words.includes('多少'), 'question scaffolding dropped');
});

t.test('titles and exact phrases keep ranking first', async (t) => {
  t.equal(
    (await search('keyword_search', { query: 'Recurring Tasks', limit: 5 })).out.rows[0]?.path,
    'Getting Started/Recurring Tasks.md',
  );
  t.equal(
    (await search('keyword_search', { query: 'How to style backlinks', limit: 5 })).out.rows[0]?.path,
    'How To/How to style backlinks.md',
  );
  t.equal(
    (await search('keyword_search', { query: '如何保持健康', limit: 5 })).out.rows[0]?.path,
    'Extra/养生/如何保持健康.md',
  );
  t.equal(
    (await search('keyword_search', { query: 'is useful for dividing up long queries', limit: 5 })).out.rows[0]?.path,
    'Queries/Line Continuations.md',
  );
});
