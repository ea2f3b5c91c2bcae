// list_bases and query_base end to end through an MCP client, on a copy of the obsidian-tasks-docs corpus
// (whose `docs pages.base` is the user's own base) plus a note holding a ```base block: the rows checked against
// an independent reading of the files, groups, paging to the end, `this`, an ad-hoc YAML query, link predicates
// against get_backlinks, and refusals that end in the MCP-REFUSAL line.
import t from 'tap';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { corpus as corpusPath, notesOnDisk } from '../../fixtures/corpus.js';
import { refusalOf as refusalOfResult, textOf as textOfResult } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';
import { applyOps, type Op } from '../../../src/host/index/store.js';
import { parseNote } from '../../../src/markdown/index.js';

const textOf = (r: unknown): string => textOfResult(r as { content?: unknown });
const refusalOf = (r: unknown) => refusalOfResult(r as { isError?: boolean; content?: unknown });

// A first index of the corpus copy on a busy machine can take a while.
t.setTimeout(300_000);
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const corpus = corpusPath('obsidian-tasks-docs');
const DEMO_NOTE = 'Bases demo/Here.md';
const server = await startTestServer({
  builtinDir: null,
  copyVaultFrom: corpus,
  files: {
    [DEMO_NOTE]: [
      '# Here',
      '',
      'Notes beside this one, and what links to Dates:',
      '',
      '```base',
      'filters: file.inFolder(this.file.folder)',
      'views:',
      '  - type: list',
      '    name: Beside',
      '    order: [file.name]',
      '```',
      '',
      '```base',
      'filters: file.hasLink("Dates")',
      'views:',
      '  - {type: table, name: Linking, order: [file.name, file.backlinks]}',
      '```',
      '',
      'Links to [[Dates]].',
    ].join('\n'),
    'Bases demo/There.md': '---\nrating: 4\ncover: "[[img.png]]"\n---\nbeside\n',
    'Bases demo/img.png': 'not really a png',
  },
  config: {
    plugins: [path.join(root, 'plugins/graph'), path.join(root, 'plugins/bases')],
    index: { watch: false, reconcileSeconds: 0 },
  },
});
t.teardown(() => server.close());
const client = await server.connect();
const db = server.host.database.db;
const vaultId = server.host.vaultHandle.id;
const index = server.host.services.named.get('index') as IndexService | undefined;
if (index) await index.whenReady(vaultId, 120_000);
else {
  const contributors = server.host.manager.registry.contributors() as never;
  const files = notesOnDisk(server.vaultDir);
  const ops = (list: string[]): Op[] =>
    list.map((p) => {
      const bytes = readFileSync(path.join(server.vaultDir, p));
      return {
        op: 'upsert',
        path: p,
        hash: `sha256:${createHash('sha256').update(bytes).digest('hex')}`,
        size: bytes.length,
        mtimeMs: Date.now(),
        model: parseNote(bytes, { path: p }),
      };
    });
  for (let i = 0; i < files.length; i += 40)
    await db
      .transaction()
      .execute((trx) => applyOps(trx, vaultId, ops(files.slice(i, i + 40)), contributors, new Date()));
}

type Cell = { type: string; value: unknown };
type Result = {
  base: string | null;
  view: string;
  views: string[];
  columns: { id: string; name: string }[];
  rows: { path: string; group?: Cell; values: Record<string, Cell> }[];
  groups: { key: Cell; count: number }[];
  summaries: { column: string; summary: string; value: Cell }[];
  total: number;
  shown: number;
  next_cursor: string | null;
};

async function query(args: Record<string, unknown>): Promise<Result> {
  const r = await client.callTool({ name: 'query_base', arguments: args });
  if (r.isError) throw new Error(textOf(r));
  return r.structuredContent as Result;
}

const allNotes = notesOnDisk(server.vaultDir);

t.test('tools/list has both tools, read-only', async (t) => {
  const tools = (await client.listTools()).tools.filter((x) => x.name === 'list_bases' || x.name === 'query_base');
  t.equal(tools.length, 2);
  for (const x of tools)
    t.same(
      x.annotations,
      {
        title: x.annotations?.title,
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false,
      },
      x.name,
    );
});

t.test('list_bases finds the .base file and both blocks of the note, with their views', async (t) => {
  const r = await client.callTool({ name: 'list_bases', arguments: {} });
  t.notOk(r.isError, textOf(r));
  const o = r.structuredContent as {
    bases: { path: string; block: number | null; views: { name: string; type: string }[]; problem: string | null }[];
    total: number;
  };
  t.same(
    o.bases.map((b) => [b.path, b.block, b.views.map((v) => v.name), b.problem]),
    [
      [DEMO_NOTE, 1, ['Beside'], null],
      [DEMO_NOTE, 2, ['Linking'], null],
      ['docs pages.base', null, ['Pages and tags'], null],
    ],
  );
  t.match(textOf(r), /`docs pages.base`: "Pages and tags" \(table\)/);
  const paged = await client.callTool({ name: 'list_bases', arguments: { limit: 2 } });
  const p1 = paged.structuredContent as { bases: unknown[]; next_cursor: string };
  t.equal(p1.bases.length, 2);
  const p2 = (await client.callTool({ name: 'list_bases', arguments: { limit: 2, cursor: p1.next_cursor } }))
    .structuredContent as {
    bases: { path: string }[];
    next_cursor: string | null;
  };
  t.same(
    p2.bases.map((b) => b.path),
    ['docs pages.base'],
  );
  t.equal(p2.next_cursor, null);
});

t.test("the corpus's docs pages.base: every note outside _meta/templates, grouped by folder", async (t) => {
  const expected = allNotes.filter((p) => !p.startsWith('_meta/templates/')).sort();
  const first = await query({ path: 'docs pages.base', limit: 500 });
  t.equal(first.view, 'Pages and tags');
  t.same(
    first.columns.map((c) => c.id),
    ['file.name', 'file.tags', 'tags'],
  );
  t.equal(first.total, expected.length, 'the total is every note the filters keep');
  t.same([...first.rows.map((r) => r.path)].sort(), expected, 'the rows are those notes');
  const folderOf = (p: string) => (p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '/');
  for (const row of first.rows) {
    t.equal(row.group?.value, folderOf(row.path), `${row.path} sits in its folder's group`);
    t.equal(row.values['file.name'].value, row.path.slice(row.path.lastIndexOf('/') + 1));
  }
  const folders = [...new Set(expected.map(folderOf))].sort();
  t.same(
    first.groups.map((g) => g.key.value),
    folders,
    'groups ascending, one per folder',
  );
  t.equal(
    first.groups.reduce((a, g) => a + g.count, 0),
    expected.length,
  );
  // A note with frontmatter tags: the tags column is its list, file.tags carries #.
  const tagged = first.rows.find((r) => r.values.tags.type === 'list');
  if (tagged)
    t.ok(
      (tagged.values['file.tags'].value as string[]).every((x) => x.startsWith('#')),
      'file.tags with #',
    );
  t.match(
    textOf(await client.callTool({ name: 'query_base', arguments: { path: 'docs pages.base', limit: 5 } })),
    /^docs pages\.base — view "Pages and tags": \d+ rows \(showing 5\)/,
  );
});

t.test('paging to the end: every row once, in the order of one page', async (t) => {
  const whole = await query({ path: 'docs pages.base', limit: 500 });
  const seen: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await query({ path: 'docs pages.base', limit: 17, ...(cursor ? { cursor } : {}) });
    seen.push(...page.rows.map((r) => r.path));
    cursor = page.next_cursor ?? undefined;
    pages++;
  } while (cursor && pages < 100);
  t.same(
    seen,
    whole.rows.map((r) => r.path),
    'pages concatenate to the whole answer',
  );
  t.equal(pages, Math.ceil(whole.total / 17));
  const other = await query({ yaml: 'views: [{type: table, name: X}]', limit: 1 });
  const mixed = await client.callTool({
    name: 'query_base',
    arguments: { path: 'docs pages.base', cursor: other.next_cursor },
  });
  t.equal(refusalOf(mixed)?.code, 'invalid_arguments', "another query's cursor is refused");
});

t.test('a ```base block: `this` is the note holding it, or the note named', async (t) => {
  const beside = await query({ path: DEMO_NOTE });
  t.equal(beside.base, `${DEMO_NOTE}#1`);
  t.same(
    beside.rows.map((r) => r.path),
    ['Bases demo/Here.md', 'Bases demo/There.md', 'Bases demo/img.png'],
    "this.file.folder is the note's folder",
  );
  const elsewhere = await query({ path: DEMO_NOTE, this: 'Queries/Filters.md' });
  const queries = allNotes.filter((p) => p.startsWith('Queries/')).sort();
  t.same(
    elsewhere.rows.map((r) => r.path),
    queries,
    'this given as an argument',
  );
  const missing = await client.callTool({ name: 'query_base', arguments: { path: DEMO_NOTE, block: 3 } });
  t.equal(refusalOf(missing)?.code, 'bases_no_base');
});

t.test('link predicates agree with get_backlinks', async (t) => {
  const bl = (
    await client.callTool({ name: 'get_backlinks', arguments: { path: 'Getting Started/Dates.md', limit: 500 } })
  ).structuredContent as {
    backlinks: { source: string; ambiguous: boolean }[];
  };
  const sources = [...new Set(bl.backlinks.filter((b) => !b.ambiguous).map((b) => b.source))].sort();
  const r = await query({ path: DEMO_NOTE, block: 2, limit: 500 });
  // get_backlinks leaves out a note's links to itself; hasLink, as in Obsidian, counts them (Dates links to itself).
  const notSelf = (rows: { path: string }[]) =>
    rows
      .map((x) => x.path)
      .filter((p) => p !== 'Getting Started/Dates.md')
      .sort();
  t.ok(
    r.rows.some((x) => x.path === 'Getting Started/Dates.md'),
    'a self-link counts for hasLink',
  );
  t.same(notSelf(r.rows), sources, 'file.hasLink("Dates") keeps the notes get_backlinks lists');
  const viaThis = await query({
    yaml: 'filters: file.hasLink(this.file)\nviews: [{type: table, name: T}]',
    this: 'Getting Started/Dates.md',
    limit: 500,
  });
  t.same(notSelf(viaThis.rows), sources, 'and so does file.hasLink(this.file)');
  const back = await query({
    yaml: 'filters: file.path == "Getting Started/Dates.md"\nviews: [{type: table, name: T, order: [file.backlinks]}]',
  });
  t.same(
    (back.rows[0].values['file.backlinks'].value as { path: string }[]).map((l) => l.path).sort(),
    sources,
    'file.backlinks lists them',
  );
});

t.test('a view of notes only still resolves a property linking to an attachment', async (t) => {
  const r = await query({ yaml: 'filters: rating >= 4\nviews: [{type: table, name: T, order: [cover]}]' });
  t.same(
    r.rows.map((x) => x.path),
    ['Bases demo/There.md'],
  );
  t.same(r.rows[0].values.cover, {
    type: 'link',
    value: { target: 'img.png', path: 'Bases demo/img.png', display: null },
  });
  const files = await query({ yaml: 'filters: file.inFolder("Bases demo")\nviews: [{type: table, name: T}]' });
  t.ok(
    files.rows.some((x) => x.path === 'Bases demo/img.png'),
    'and a view that can hold attachments lists them',
  );
});

t.test('an ad-hoc YAML query with formulas, sort, limit and summaries', async (t) => {
  const yaml = [
    'filters:',
    '  and:',
    '    - file.inFolder("Queries")',
    '    - file.ext == "md"',
    'formulas:',
    '  kb: (file.size / 1024).round(1)',
    '  big: formula.kb > 5',
    'properties:',
    '  formula.kb: {displayName: KiB}',
    'views:',
    '  - type: table',
    '    name: Largest',
    '    order: [file.name, formula.kb, formula.big]',
    '    sort: [{property: file.size, direction: DESC}, {property: file.name, direction: ASC}]',
    '    limit: 5',
    '    summaries: {formula.kb: Sum, formula.big: Checked, file.name: Count}',
  ].join('\n');
  const r = await query({ yaml });
  t.equal(r.base, null);
  t.same(r.columns[1], { id: 'formula.kb', name: 'KiB' });
  const sizes = allNotes
    .filter((p) => p.startsWith('Queries/'))
    .map((p) => ({ p, size: readFileSync(path.join(server.vaultDir, p)).length }))
    .sort((a, b) => b.size - a.size || (a.p < b.p ? -1 : 1))
    .slice(0, 5);
  t.same(
    r.rows.map((x) => x.path),
    sizes.map((s) => s.p),
    'the five largest notes, largest first',
  );
  t.equal(r.total, 5, 'limit caps the view');
  t.same(r.rows[0].values['formula.kb'], { type: 'number', value: Math.round((sizes[0].size / 1024) * 10) / 10 });
  const sum = r.summaries.find((s) => s.summary === 'Sum')!;
  t.equal(
    Math.round((sum.value.value as number) * 10),
    Math.round(sizes.reduce((a, s) => a + Math.round((s.size / 1024) * 10) / 10, 0) * 10),
  );
  t.same(r.summaries.find((s) => s.summary === 'Count')?.value, { type: 'number', value: 5 });
  t.match(textOf(await client.callTool({ name: 'query_base', arguments: { yaml } })), /Sum of formula\.kb: /);
});

t.test('refusals carry the MCP-REFUSAL line and name what is wrong', async (t) => {
  const cases: [Record<string, unknown>, string][] = [
    [{ yaml: 'filters: file.dataviewThing()\nviews: [{type: table, name: T}]' }, 'bases_unsupported'],
    [{ yaml: 'views: [{type: map, name: M}]' }, 'bases_unsupported'],
    [{ yaml: 'filters: "a +"' }, 'bases_syntax'],
    [{ yaml: `filters: "${'('.repeat(500)}1${')'.repeat(500)}"` }, 'bases_too_complex'],
    [{ yaml: 'formulas: {a: formula.a}\nviews: [{type: table, name: T}]' }, 'bases_formula_cycle'],
    [{ path: 'docs pages.base', view: 'Nope' }, 'bases_no_view'],
    [{ path: 'nowhere.base' }, 'not_found'],
    [{ path: 'Queries/Filters.md' }, 'bases_no_base'],
    [{ path: 'docs pages.base', yaml: 'views: []' }, 'invalid_arguments'],
    [{}, 'invalid_arguments'],
  ];
  for (const [args, code] of cases) {
    const r = await client.callTool({ name: 'query_base', arguments: args });
    t.ok(r.isError, JSON.stringify(args).slice(0, 80));
    t.equal(refusalOf(r)?.code, code, JSON.stringify(args).slice(0, 80));
    t.match(textOf(r), /\nMCP-REFUSAL \{"code":/);
  }
});
