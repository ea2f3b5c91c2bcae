// get_tags, search_regex and the connector pair (search/fetch) end to end on a copy of a corpus vault
// through the MCP client: nested tag counts, line-numbered regex matches, the time budget, globs,
// bounded output that says when it cut, and the JSON shapes ChatGPT connectors parse.
import t from 'tap';
import { corpus as corpusPath } from '../../fixtures/corpus.js';
import { refusalOf, textOf } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';

type ToolResult = { isError?: boolean; content?: unknown; structuredContent?: unknown };

const others = {
  files: { enabled: false },
  graph: { enabled: false },
  tasks: { enabled: false },
  notes: { enabled: false },
};
const server = await startTestServer({
  copyVaultFrom: corpusPath('obsidian-tasks-docs'),
  files: {
    'Zeta/Alpha.md':
      '---\ntags: [exo/alpha, exo/alpha/deep]\n---\n# Alpha\n\nfirst line\nversion 1.2.3 shipped on 2024-05-06\nsecond ver 10.20.30 here\n',
    'Zeta/Beta.md': '---\ntags: [exo/beta]\n---\n# Beta\n\nnothing to see #exo\n',
    'Zeta/Gamma.md': '# Gamma\n\n#EXO/Alpha mentioned inline\n',
    'Zeta/Evil.md': `# Evil\n\n${'a'.repeat(40)}!\n`,
    'Zeta/Long.md': `# Long\n\n${Array.from({ length: 400 }, (_, i) => `line ${i} ${'x'.repeat(40)} needle`).join('\n')}\n`,
  },
  config: {
    families: others,
    search: {
      regex: { timeoutMs: 1500, maxOutputChars: 6000 },
      connector: { fetchMaxChars: 2000, vaultName: 'My Vault' },
    },
  },
});
t.teardown(() => server.close());
const vaultId = server.host.vaultHandle.id;
const index = server.host.services.named.get('index') as IndexService;
const ready = await index.whenReady(vaultId, 60_000);
const client = await server.connect();

async function call(name: string, args: Record<string, unknown>) {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  if (r.isError) t.fail(textOf(r));
  return { out: r.structuredContent as Record<string, any>, text: textOf(r) };
}

t.test('get_tags: counts with nested tags aggregated, prefix, limit cut', async (t) => {
  t.ok(ready);
  const { out, text } = await call('get_tags', { prefix: '#exo' });
  const byTag = Object.fromEntries(out.rows.map((r: { tag: string }) => [r.tag, r]));
  t.same(byTag.exo, { tag: 'exo', notes: 3, direct: 1 }, 'exo counts Alpha, Beta and Gamma once each');
  t.same(byTag['exo/alpha'], { tag: 'exo/alpha', notes: 2, direct: 2 });
  t.same(byTag['exo/alpha/deep'], { tag: 'exo/alpha/deep', notes: 1, direct: 1 });
  t.same(byTag['exo/beta'], { tag: 'exo/beta', notes: 1, direct: 1 });
  t.equal(out.rows[0].tag, 'exo', 'most used first');
  t.match(text, /^#exo 3 \(direct 1\)$/m);
  const top = await call('get_tags', { limit: 2 });
  t.equal(top.out.count, 2);
  t.ok(top.out.total > 2 && top.out.cut);
  t.match(top.text, /more: cursor=/);
  // The cursor walks the rest: every tag once, the union equal to one full listing.
  const seen: string[] = top.out.rows.map((r: { tag: string }) => r.tag);
  let cursor = top.out.next_cursor;
  while (cursor) {
    const page = await call('get_tags', { limit: 2, cursor });
    seen.push(...page.out.rows.map((r: { tag: string }) => r.tag));
    cursor = page.out.next_cursor;
  }
  t.equal(new Set(seen).size, seen.length, 'no tag twice');
  t.same(
    seen,
    (await call('get_tags', { limit: 1000 })).out.rows.map((r: { tag: string }) => r.tag),
  );
});

t.test('search_regex: line-numbered matches marked «», counts and per-file cap', async (t) => {
  const { out, text } = await call('search_regex', { pattern: '\\d+\\.\\d+\\.\\d+', folder: 'Zeta' });
  t.same(out.results, [
    {
      path: 'Zeta/Alpha.md',
      path_match: false,
      match_count: 2,
      matches: [
        { line: 7, text: 'version «1.2.3» shipped on 2024-05-06' },
        { line: 8, text: 'second ver «10.20.30» here' },
      ],
    },
  ]);
  t.equal(out.files_total, 5);
  t.equal(out.files_scanned, 5);
  t.match(text, /^ {2}7: version «1\.2\.3» shipped/m);
  const capped = await call('search_regex', { pattern: 'needle$', folder: 'Zeta', max_matches_per_file: 3 });
  t.equal(capped.out.results[0].match_count, 400);
  t.equal(capped.out.results[0].matches.length, 3);
  t.match(capped.text, /400 matching lines, 3 shown/);
  const ci = await call('search_regex', { pattern: 'EVIL', scope: 'both', ignore_case: true, folder: 'Zeta' });
  t.same(
    ci.out.results.map((r: { path: string; path_match: boolean }) => [r.path, r.path_match]),
    [['Zeta/Evil.md', true]],
  );
});

t.test('search_regex: limit and output budget cut, and say so', async (t) => {
  const limited = await call('search_regex', { pattern: 'task', ignore_case: true, limit: 3 });
  t.equal(limited.out.count, 3);
  t.equal(limited.out.cut, true);
  t.ok(limited.out.files_scanned < limited.out.files_total);
  t.match(limited.text, /limit of 3 files reached; more notes may match/);
  const budget = await call('search_regex', { pattern: 'the', limit: 100, max_matches_per_file: 20 });
  t.equal(budget.out.cut, true);
  t.match(budget.out.cut_reason, /output budget of 6000 characters/);
  t.ok(budget.text.length < 9000, `render stays bounded (${budget.text.length} chars)`);
});

t.test('search_regex: a catastrophic pattern is stopped by the time budget, the server stays responsive', async (t) => {
  const started = Date.now();
  const { out, text } = await call('search_regex', { pattern: '^(a+)+$', folder: 'Zeta' });
  t.ok(Date.now() - started < 5000, 'answered within the budget');
  t.match(out.stopped, /time budget of 1500 ms spent after \d+ of 5 notes; results are partial/);
  t.match(text, /note: stopped early: time budget/);
  const tags = await call('get_tags', { prefix: 'exo/beta' });
  t.equal(tags.out.count, 1);
});

t.test('search_regex: globs match paths; bad input refuses', async (t) => {
  const { out } = await call('search_regex', { pattern: 'Zeta/*a.md', is_glob: true });
  t.same(
    out.results.map((r: { path: string }) => r.path),
    ['Zeta/Alpha.md', 'Zeta/Beta.md', 'Zeta/Gamma.md'],
  );
  const deep = await call('search_regex', { pattern: '**/Recurring*', is_glob: true });
  t.same(
    deep.out.results.map((r: { path: string }) => r.path),
    ['Getting Started/Recurring Tasks.md', 'Getting Started/Statuses/Recurring Tasks and Custom Statuses.md'],
  );
  const bad = (await client.callTool({ name: 'search_regex', arguments: { pattern: '(unclosed' } })) as ToolResult;
  t.equal(refusalOf(bad)?.code, 'invalid_arguments');
  t.match(textOf(bad), /not a valid regular expression/);
  const globContent = (await client.callTool({
    name: 'search_regex',
    arguments: { pattern: '*.md', is_glob: true, scope: 'content' },
  })) as ToolResult;
  t.equal(refusalOf(globContent)?.code, 'invalid_arguments');
});

t.test('search: the connector result list as JSON, on hybrid ranking', async (t) => {
  const r = (await client.callTool({ name: 'search', arguments: { query: 'Recurring Tasks' } })) as ToolResult;
  const parsed = JSON.parse(textOf(r));
  t.same(parsed, r.structuredContent, 'the text is the structured result as JSON');
  t.ok(parsed.results.length > 0 && parsed.results.length <= 10);
  t.same(parsed.results[0], {
    id: 'Getting Started/Recurring Tasks.md',
    title: 'Recurring Tasks',
    url: 'obsidian://open?vault=My%20Vault&file=Getting%20Started%2FRecurring%20Tasks.md',
  });
  const hybrid = await call('hybrid_search', { query: 'quick reference', limit: 3 });
  t.equal(hybrid.out.rows[0].path, 'Quick Reference.md');
  t.equal(hybrid.out.rows[0].exact_title, true, 'an exact title ranks first in hybrid too');
  t.match(hybrid.text, /· exact title\]/);
  const none = await call('search', { query: 'zzqqxxnothing' });
  t.same(none.out, { results: [] });
});

t.test('fetch: full text, metadata, cut long notes, refusals', async (t) => {
  const { out, text } = await call('fetch', { id: 'Zeta/Alpha.md' });
  t.same(JSON.parse(text), out);
  t.equal(out.id, 'Zeta/Alpha.md');
  t.equal(out.title, 'Alpha');
  t.match(out.text, /^---\ntags: \[exo\/alpha, exo\/alpha\/deep\]\n---\n# Alpha\n/);
  t.equal(out.url, 'obsidian://open?vault=My%20Vault&file=Zeta%2FAlpha.md');
  t.same(out.metadata.tags, ['exo/alpha', 'exo/alpha/deep']);
  t.match(out.metadata.content_hash, /^sha256:[0-9a-f]{64}$/);
  t.equal(out.metadata.truncated, false);
  const long = await call('fetch', { id: 'Zeta/Long.md' });
  t.equal(long.out.metadata.truncated, true);
  t.ok(long.out.text.length < 2300);
  t.match(long.out.text, /\[… cut at character 2000 of \d+; continue with fetch\(id="Zeta\/Long\.md", offset=2000\)/);
  t.equal(long.out.metadata.next_offset, 2000);
  const rest = await call('fetch', { id: 'Zeta/Long.md', offset: 2000 });
  t.equal(rest.out.metadata.offset, 2000, 'offset continues a cut fetch');
  t.ok(rest.out.text.length > 0);
  const missing = (await client.callTool({ name: 'fetch', arguments: { id: 'Nope/None.md' } })) as ToolResult;
  t.equal(refusalOf(missing)?.code, 'not_found');
  const escape = (await client.callTool({ name: 'fetch', arguments: { id: '../outside.md' } })) as ToolResult;
  t.equal(refusalOf(escape)?.code, 'invalid_path');
});

t.test('every new tool declares its hints and output schema', async (t) => {
  const { tools } = await client.listTools();
  for (const name of ['get_tags', 'search_regex', 'search', 'fetch']) {
    const tool = tools.find((x) => x.name === name);
    t.ok(tool?.outputSchema, `${name} has an output schema`);
    t.same(
      tool?.annotations &&
        Object.keys(tool.annotations)
          .filter((k) => k.endsWith('Hint'))
          .sort(),
      ['destructiveHint', 'idempotentHint', 'openWorldHint', 'readOnlyHint'],
    );
    t.ok((tool?.description?.length ?? 0) <= 1500, `${name} description ≤ 1500 chars`);
  }
});
