// The keyword arm (and the tools beside it) over a native PostgreSQL 15 server through `pg`: the same
// migrations, contributor and ranking SQL as on PGlite. That server has no pgvector, so semantic and
// hybrid must say so plainly. Skipped where the PostgreSQL 15 binaries are not installed.
import t from 'tap';
import { corpus as corpusPath } from '../../fixtures/corpus.js';
import { textOf } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import { postgresAvailable, startPostgres } from '../../../src/host/testing/postgres-server.js';
import type { IndexService } from '../../../src/sdk/index-service.js';

type ToolResult = { isError?: boolean; content?: unknown; structuredContent?: unknown };

t.test(
  'keyword search over native PostgreSQL 15',
  { skip: postgresAvailable() ? false : 'PostgreSQL 15 server binaries not installed' },
  async (t) => {
    const pg = await startPostgres();
    t.teardown(() => pg.stop());
    const server = await startTestServer({
      copyVaultFrom: corpusPath('obsidian-tasks-docs'),
      files: {
        'Extra/Project Phoenix.md':
          '---\naliases: [Firebird]\nstatus: active\ntags: [project/phoenix]\n---\n# Project Phoenix\n\nThe migration of the billing system to the new cluster.\n',
        'Extra/Phoenix notes.md':
          '---\nstatus: dormant\n---\nSome words about phoenix birds and their ashes, and nothing on invoices.\n',
        'Extra/中文笔记.md': '# 中文笔记\n\n这是 一个 测试 笔记 关于 搜索\n',
      },
      config: {
        database: { url: pg.url },
        families: {
          files: { enabled: false },
          graph: { enabled: false },
          tasks: { enabled: false },
          notes: { enabled: false },
        },
        search: { ftsConfigs: ['english', 'simple'], embedding: { provider: 'ollama' } },
      },
    });
    t.teardown(() => server.close());
    t.equal(server.host.database.engine.kind, 'postgres');
    const vaultId = server.host.vaultHandle.id;
    const index = server.host.services.named.get('index') as IndexService;
    t.ok(await index.whenReady(vaultId, 60_000), 'the index finished its initial scan');
    const client = await server.connect();
    const call = async (name: string, args: Record<string, unknown>) => {
      const r = (await client.callTool({ name, arguments: args })) as ToolResult;
      if (r.isError) t.fail(textOf(r));
      return { out: r.structuredContent as Record<string, any>, text: textOf(r) };
    };
    const paths = (o: { rows: Array<{ path: string }> }) => o.rows.map((r) => r.path);

    const title = await call('keyword_search', { query: 'Recurring Tasks', limit: 5 });
    t.equal(title.out.rows[0].path, 'Getting Started/Recurring Tasks.md', 'a title query ranks the note first');
    t.equal(
      (await call('keyword_search', { query: 'firebird' })).out.rows[0].path,
      'Extra/Project Phoenix.md',
      'aliases count as titles',
    );

    const fill = await call('keyword_search', { query: 'every weekday', limit: 5 });
    t.equal(fill.out.full_matches, 1);
    t.equal(fill.out.rows[0].match, 'all');
    t.ok(
      fill.out.rows.slice(1).every((r: { match: string }) => r.match === 'any'),
      'partial matches fill the page',
    );

    const snip = await call('keyword_search', { query: 'recurrence rule', limit: 3 });
    t.ok(
      snip.out.rows.some((r: { snippet?: string }) => /«recurrence» «rule»/.test(r.snippet ?? '')),
      'matches marked in snippets',
    );

    t.same(paths((await call('keyword_search', { query: '"billing system"' })).out as any), [
      'Extra/Project Phoenix.md',
    ]);
    t.same(paths((await call('keyword_search', { query: 'phoenix -billing' })).out as any), ['Extra/Phoenix notes.md']);
    t.same(paths((await call('keyword_search', { query: 'phoenix', tags: ['project'] })).out as any), [
      'Extra/Project Phoenix.md',
    ]);
    t.same(paths((await call('keyword_search', { query: 'phoenix', frontmatter: { status: 'dormant' } })).out as any), [
      'Extra/Phoenix notes.md',
    ]);
    t.same(
      paths((await call('keyword_search', { query: '测试' })).out as any),
      ['Extra/中文笔记.md'],
      'CJK under simple',
    );
    t.same(
      paths((await call('keyword_search', { query: '笔记关于' })).out as any),
      ['Extra/中文笔记.md'],
      'a CJK substring spanning two words matches',
    );
    const question = await call('keyword_search', { query: 'What do my notes say about invoices?' });
    t.equal(
      question.out.rows[0]?.path,
      'Extra/Phoenix notes.md',
      'question words are not evidence on the server engine either',
    );
    t.match(question.out.rows[0]?.why, /invoic\w* b \d/);

    const hybrid = await call('hybrid_search', { query: 'Recurring Tasks', limit: 3 });
    t.match(hybrid.out.arms, /^keyword-only \(semantic unavailable: .*pgvector/);
    t.equal(hybrid.out.rows[0].path, 'Getting Started/Recurring Tasks.md');
    // Without pgvector semantic_search cannot work: it is not listed, and a call is refused with the reason.
    const sem = await client.callTool({ name: 'semantic_search', arguments: { query: 'anything' } });
    t.ok(sem.isError, 'semantic_search is refused without pgvector');
    t.match(textOf(sem), /pgvector/);
    t.notOk(
      (await client.listTools()).tools.some((x) => x.name === 'semantic_search'),
      'and not listed',
    );

    const tags = await call('get_tags', { prefix: 'project' });
    t.same(tags.out.rows.slice(0, 2), [
      { tag: 'project', notes: 1, direct: 0 },
      { tag: 'project/phoenix', notes: 1, direct: 1 },
    ]);
    const regex = await call('search_regex', { pattern: 'billing \\w+', folder: 'Extra' });
    t.same(regex.out.results[0].matches, [
      { line: 8, text: 'The migration of the «billing system» to the new cluster.' },
    ]);
    const search = await call('search', { query: 'Recurring Tasks' });
    t.equal(search.out.results[0].id, 'Getting Started/Recurring Tasks.md');
  },
);
