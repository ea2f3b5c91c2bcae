// keyword_search end to end on a copy of a corpus vault (real host, real index pipeline, real MCP
// client): title first, AND→OR fill, «» snippets, filters, websearch syntax, the hybrid fallback
// marker, and the ftsConfigs fingerprint (refusal to start, rebuild, CJK under `simple`).
import t from 'tap';
import { corpus as corpusPath } from '../../fixtures/corpus.js';

type ToolResult = { isError?: boolean; content?: unknown; structuredContent?: unknown };
import { rebuildKeyword } from '../../../plugins/search/family.js';
import { refusalOf, textOf } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';

const CORPUS = corpusPath('obsidian-tasks-docs');
const others = {
  files: { enabled: false },
  graph: { enabled: false },
  tasks: { enabled: false },
  notes: { enabled: false },
};

const server = await startTestServer({
  copyVaultFrom: CORPUS,
  files: {
    'Extra/Project Phoenix.md':
      '---\naliases: [Firebird]\nstatus: active\ntags: [project/phoenix]\n---\n# Project Phoenix\n\nThe migration of the billing system to the new cluster.\n',
    'Extra/Phoenix notes.md':
      '---\nstatus: dormant\n---\nSome words about phoenix birds and their ashes, and nothing on invoices.\n',
    'Extra/中文笔记.md': '# 中文笔记\n\n这是 一个 测试 笔记 关于 搜索\n',
  },
  config: { families: others },
});
t.teardown(() => server.close());
const vaultId = server.host.vaultHandle.id;
const index = server.host.services.named.get('index') as IndexService;
const ready = await index.whenReady(vaultId, 60_000);
const client = await server.connect();
t.ok(ready, 'the index finished its initial scan');

async function search(args: Record<string, unknown>) {
  const r = (await client.callTool({ name: 'keyword_search', arguments: args })) as ToolResult;
  if (r.isError) t.fail(textOf(r));
  return {
    out: r.structuredContent as {
      rows: Array<Record<string, any>>;
      full_matches: number;
      count: number;
      candidates_capped: boolean;
      cut: boolean;
    },
    text: textOf(r),
  };
}

t.test('a query that is a note title ranks that note first', async (t) => {
  const { out } = await search({ query: 'Recurring Tasks', limit: 5 });
  t.equal(out.rows[0].path, 'Getting Started/Recurring Tasks.md');
  t.same(out.rows[0].matched_in, ['title', 'body']);
  t.equal(out.rows[0].terms, '2/2');
  const alias = await search({ query: 'firebird' });
  t.equal(alias.out.rows[0].path, 'Extra/Project Phoenix.md', 'an alias counts as a title');
});

t.test('bare terms are ANDed; partial matches fill the page tagged match: any', async (t) => {
  const { out, text } = await search({ query: 'every weekday', limit: 5 });
  t.equal(out.full_matches, 1);
  t.equal(out.rows[0].path, 'Getting Started/Recurring Tasks.md');
  t.equal(out.rows[0].match, 'all');
  t.ok(out.rows.slice(1).every((r) => r.match === 'any' && r.terms === '1/2'));
  t.equal(out.count, 5);
  t.match(text, /\[match: any · in: body · terms 1\/2/);
});

t.test('snippets mark matches with «» and stay short; title-only matches show head', async (t) => {
  const { out, text } = await search({ query: 'recurrence rule', limit: 3 });
  const snippet = out.rows[0].snippet as string;
  t.match(snippet, /«recurrence» «rule»/);
  t.ok(snippet.length <= 242, `snippet length ${snippet.length}`);
  t.match(text, /^ {3}snippet: /m);
  const { out: title } = await search({ query: 'firebird' });
  t.equal(title.rows[0].snippet, undefined);
  t.match(title.rows[0].head, /migration of the billing system/);
});

t.test('websearch syntax: phrases, OR and exclusion', async (t) => {
  const phrase = await search({ query: '"billing system"' });
  t.same(
    phrase.out.rows.map((r) => r.path),
    ['Extra/Project Phoenix.md'],
  );
  const either = await search({ query: 'firebird OR ashes' });
  t.same(either.out.rows.map((r) => r.path).sort(), ['Extra/Phoenix notes.md', 'Extra/Project Phoenix.md']);
  const not = await search({ query: 'phoenix -billing' });
  t.same(
    not.out.rows.map((r) => r.path),
    ['Extra/Phoenix notes.md'],
  );
});

t.test('filters: folder, tags (nested), frontmatter', async (t) => {
  const folder = await search({ query: 'task', folder: 'Editing', limit: 50 });
  t.ok(folder.out.rows.length > 0 && folder.out.rows.every((r) => String(r.path).startsWith('Editing/')));
  const tag = await search({ query: 'phoenix', tags: ['project'] });
  t.same(
    tag.out.rows.map((r) => r.path),
    ['Extra/Project Phoenix.md'],
    'project matches project/phoenix',
  );
  const fm = await search({ query: 'phoenix', frontmatter: { status: 'dormant' } });
  t.same(
    fm.out.rows.map((r) => r.path),
    ['Extra/Phoenix notes.md'],
  );
  const none = await search({ query: 'phoenix', folder: 'Nowhere' });
  t.equal(none.out.count, 0);
  t.match(none.text, /no matches/);
});

t.test('limits are bounded and the cut is said', async (t) => {
  const { out, text } = await search({ query: 'task', limit: 200 });
  t.equal(out.count, 50);
  t.equal(out.cut, true);
  t.match(text, /limit cut/);
  const bad = (await client.callTool({ name: 'keyword_search', arguments: { query: '' } })) as ToolResult;
  t.equal(refusalOf(bad)?.code, 'invalid_arguments');
});

t.test('a write through the index is searchable at once', async (t) => {
  await server.host.vaultHandle.fs.create('Extra/Fresh.md', Buffer.from('# Fresh\n\nzanzibar quokka\n'));
  await index.noteWritten(vaultId, 'Extra/Fresh.md');
  const { out } = await search({ query: 'quokka' });
  t.same(
    out.rows.map((r) => r.path),
    ['Extra/Fresh.md'],
  );
});

t.test('hybrid and semantic say plainly that the semantic arm is off', async (t) => {
  const h = (await client.callTool({
    name: 'hybrid_search',
    arguments: { query: 'Recurring Tasks', limit: 3 },
  })) as ToolResult;
  const ho = h.structuredContent as {
    arms: string;
    rows: Array<{ path: string; keyword_rank: number | null; semantic_rank: number | null }>;
  };
  t.equal(ho.arms, 'keyword-only (semantic unavailable: no embedding provider configured)');
  t.equal(ho.rows[0].path, 'Getting Started/Recurring Tasks.md');
  t.equal(ho.rows[0].semantic_rank, null);
  t.match(textOf(h), /arms: keyword-only \(semantic unavailable: no embedding provider configured\)/);
  const r = (await client.callTool({
    name: 'hybrid_search',
    arguments: { query: 'Recurring Tasks', rerank: true },
  })) as ToolResult;
  t.match(textOf(r), /arms: keyword-only .* reranked: false \(not_configured\)/);
  // semantic_search cannot work without a provider: it is not listed, and a call is refused with the reason.
  const s = (await client.callTool({ name: 'semantic_search', arguments: { query: 'anything' } })) as ToolResult;
  t.ok(s.isError, 'semantic_search is refused without a provider');
  t.match(textOf(s), /no embedding provider configured/);
  t.notOk(
    (await client.listTools()).tools.some((x) => x.name === 'semantic_search'),
    'and not listed',
  );
});

t.test('ftsConfigs: a bad name and a changed list refuse to start; rebuild-keyword fixes the latter', async (t) => {
  await server.rewriteConfig({ search: { ftsConfigs: ['englsh'] } });
  let status = server.host.manager.registry.status.get('search');
  t.match(status?.reason, /englsh.*available: .*english/);
  await server.rewriteConfig({ search: { ftsConfigs: ['english', 'simple'] } });
  status = server.host.manager.registry.status.get('search');
  t.match(status?.reason, /changed from \[english\] to \[english, simple\].*rebuild-keyword/);
  const stopBefore = await search({ query: 'the' });
  t.equal(stopBefore.out.count, 0, 'the old generation still serves english only (a stop word matches nothing)');
  const rebuilt = await rebuildKeyword(server.host.database.db, { configs: ['english', 'simple'] });
  t.ok(rebuilt > 100);
  await server.rewriteConfig({ search: { ftsConfigs: ['english', 'simple'], rrfK: 61 } });
  status = server.host.manager.registry.status.get('search');
  t.equal(status?.state, 'serving');
  t.notOk(status?.reason);
  const cjk = await search({ query: '测试' });
  t.same(
    cjk.out.rows.map((r) => r.path),
    ['Extra/中文笔记.md'],
  );
  const stop = await search({ query: 'the' });
  t.ok(stop.out.count > 0, 'stop words match under simple');
});
