// Every listing tool is walkable to its end under a small result budget (tools.maxResultTokens 2,000): on a
// vault made to overflow it (a note with hundreds of links, a hub with hundreds of backlinks, hundreds of
// orphans, tags, tasks and daily notes, a note with a hundred revisions, a 2 MB note, long CJK text), each
// tool is walked by its own continuation (continue_with, next_cursor, next_offset, next_since) and the union
// of its pages must equal the full answer computed another way (from the files written or the database),
// with no row twice and no page over the budget. The tools come from tools/list, so a tool added later that
// lists rows fails here until it pages, or is named below with the reason it keeps result_too_large.
// Sizes are just large enough to overflow the budget several times over, so the walk stays quick.
import t, { type Test } from 'tap';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';
import { refusalOf, textOf } from '../../../src/host/testing/testkit.js';
import type { EmbeddingsService } from '../../../plugins/search/embeddings/types.js';
import { startEmbeddingServer, waitEmbedded } from '../search/embedding-server.js';

t.setTimeout(240_000);

const BUDGET = 2000;
const N_LINKS = 300;
const N_SPOKES = 120;
const N_DAILY = 150;
const N_BASES = 60;
const N_REVISIONS = 60;
const N_DELETED = 50;

const pad = (n: number, w = 3) => String(n).padStart(w, '0');
const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/** Local calendar dates, today first (periodic notes are named by the server's local day). */
const dayName = (k: number) => {
  const d = new Date();
  d.setDate(d.getDate() - k);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1, 2)}-${pad(d.getDate(), 2)}`;
};
const DAILY = range(N_DAILY).map((i) => `Daily Notes/${dayName(i - 1)}.md`);
const SPOKES = range(N_SPOKES).map((i) => `Spokes/Spoke ${pad(i)}.md`);
const TRASH = range(N_DELETED).map((i) => `Trash/Gone ${pad(i)}.md`);
const CJK_LINES = range(160).map(
  (i) => `第${i}段：${'春夏秋冬山水风月花鸟'.repeat(3).slice(i % 10, (i % 10) + 20)}，知识管理与笔记整理的长段落。`,
);
const CJK = `${CJK_LINES.join('\n')}\n`;
const CJK_EDITED = `${CJK_LINES.map((l) => l.replace('知识', '学问')).join('\n')}\n`;
const TWO_MB_LINE = 'line of the two megabyte note, lorem ipsum dolor sit amet, consectetur adipiscing\n';
const TWO_MB = TWO_MB_LINE.repeat(Math.ceil((2 * 1024 * 1024) / TWO_MB_LINE.length));

const files: Record<string, string> = {
  'Many Links.md': `# Many Links\n\n${range(N_LINKS)
    .map((i) => `- [[Missing ${pad(i)}]]`)
    .join('\n')}\n`,
  'Hub.md': '# Hub\n\nThe hub every spoke links to.\n',
  'Edited.md': '# Edited\n\nversion 0\n',
  'Long/CJK.md': CJK,
  'Long/Two MB.md': TWO_MB,
  // Saved bases, enough of them to overflow the budget in list_bases.
  ...Object.fromEntries(
    range(N_BASES).map((i) => [
      `Bases/Base ${pad(i)}.base`,
      `filters: 'file.inFolder("Daily Notes")'\nviews:\n  - type: table\n    name: Days ${pad(i)}\n    order: [file.name]\n`,
    ]),
  ),
  'Outline.md': range(300)
    .map((i) => `## Heading number ${pad(i)}\n\ntext ${i}\n`)
    .join('\n'),
};
for (const [i, p] of SPOKES.entries()) files[p] = `# Spoke ${pad(i + 1)}\n\nSee [[Hub]] from spoke ${i + 1}.\n`;
for (const [i, p] of DAILY.entries())
  files[p] = `zebrafish day ${pad(i + 1)} #tag-${pad(i + 1)}\n\n- [ ] chore of day ${pad(i + 1)}\n`;
for (const p of TRASH) files[p] = `# Gone\n\nto be deleted\n`;

const began = Date.now();
const fake = await startEmbeddingServer(32);
const server = await startTestServer({
  files,
  config: {
    index: { watch: false, reconcileSeconds: 0 },
    tools: { maxResultTokens: BUDGET },
    // The writes below and the walked dry runs are write-class calls: past the default write bucket.
    admission: { writesPerMinute: 1000 },
    // A ranked answer is its best search.maxLimit (graph.relatedCap, search.armDepth per hybrid arm) rows: raised so that it is every match.
    graph: { relatedCap: 1000 },
    search: {
      maxLimit: 200,
      armDepth: 200,
      embedding: {
        provider: 'openai',
        baseUrl: `${fake.url}/v1`,
        model: 'hash-32',
        dimensions: 32,
        pollMs: 20,
        backoffMs: 20,
        maxBackoffMs: 200,
        retries: 0,
        batchSize: 64,
      },
    },
  },
});
t.teardown(async () => {
  await server.close();
  await fake.close();
});
const vaultId = server.host.vaultHandle.id;
const db = server.host.database.db;
const index = server.host.services.named.get('index') as IndexService;
await index.whenReady(vaultId, 120_000);
const client = await server.connect();
const registry = server.host.manager.registry;
t.comment(`started and indexed in ${Date.now() - began} ms`);

type Args = Record<string, unknown>;
type Out = Record<string, any>;
interface Result {
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Out;
  isError?: boolean;
}

async function write(name: string, args: Args): Promise<Out> {
  const r = (await client.callTool({ name, arguments: args })) as Result;
  if (r.isError) throw new Error(`${name}(${JSON.stringify(args).slice(0, 200)}) was refused: ${textOf(r)}`);
  return r.structuredContent ?? {};
}

// Writes through the tools: a hundred revisions of one note, deleted notes, a second version of the CJK note.
for (const i of range(N_REVISIONS))
  await write('edit_note', { path: 'Edited.md', content: `# Edited\n\nversion ${i}\n` });
for (const p of TRASH) await write('delete_note', { path: p });
await write('edit_note', { path: 'Long/CJK.md', content: CJK_EDITED });
const svc = () => registry.providedService('embeddings') as EmbeddingsService;
const notesOnDisk = Object.keys(files).filter((p) => p.endsWith('.md')).length - N_DELETED;
t.comment(`written through the tools at ${Date.now() - began} ms`);
await waitEmbedded(() => svc().counts(vaultId), notesOnDisk, 120_000);
t.comment(`embedded at ${Date.now() - began} ms`);

/** Tokens a model may read from one result: each text block and the structuredContent JSON. */
function tokensOf(r: Result): number {
  let n = 0;
  for (const c of r.content) if (c.type === 'text' && c.text) n += countTokens(c.text);
  if (r.structuredContent) n += countTokens(JSON.stringify(r.structuredContent));
  return n;
}

/** The call that continues this page: the host's continue_with, else the tool's own cursor, offset or since. */
function nextArgs(args: Args, o: Out): Args | undefined {
  if (o.continue_with) return o.continue_with.arguments as Args;
  if (typeof o.next_cursor === 'string') return { ...args, cursor: o.next_cursor };
  if (typeof o.next_offset === 'number') return { ...args, offset: o.next_offset };
  if (typeof o.metadata?.next_offset === 'number') return { ...args, offset: o.metadata.next_offset };
  if (o.more === true && typeof o.next_since === 'string') return { ...args, since: o.next_since };
  return undefined;
}

const walked = new Map<string, number>();

/** Call a tool, then follow its continuations to the end: every page within the budget. */
async function walk(t: Test, name: string, args: Args): Promise<Out[]> {
  const pages: Out[] = [];
  let at: Args | undefined = args;
  while (at) {
    const r = (await client.callTool({ name, arguments: at })) as Result;
    if (r.isError) {
      t.fail(`${name}(${JSON.stringify(at).slice(0, 160)}) refused: ${refusalOf(r)?.code ?? textOf(r).slice(0, 300)}`);
      break;
    }
    const tokens = tokensOf(r);
    if (tokens > BUDGET) t.fail(`${name} page ${pages.length + 1} is ${tokens} tokens, over ${BUDGET}`);
    pages.push(r.structuredContent ?? {});
    at = nextArgs(at, r.structuredContent ?? {});
    if (pages.length > 400) {
      t.fail(`${name} did not reach its end in 400 pages`);
      break;
    }
  }
  walked.set(name, pages.length);
  t.ok(pages.length > 1, `${name}: the full answer overflows the budget (${pages.length} pages)`);
  return pages;
}

/** The union of a walk's rows by key, failing on a row listed twice. */
function union(t: Test, name: string, pages: Out[], rows: (o: Out) => any[], key: (row: any) => string): string[] {
  const seen = new Set<string>();
  const twice: string[] = [];
  for (const p of pages)
    for (const row of rows(p)) {
      const k = key(row);
      if (seen.has(k)) twice.push(k);
      seen.add(k);
    }
  t.same(twice.slice(0, 5), [], `${name}: no row is listed twice`);
  return [...seen].sort();
}

const sorted = (xs: Iterable<string>) => [...xs].sort();

/** Files and folders of the vault on disk, vault-relative. */
function onDisk(): { files: string[]; folders: string[] } {
  const out = { files: [] as string[], folders: [] as string[] };
  const visit = (rel: string) => {
    for (const e of readdirSync(path.join(server.vaultDir, rel))) {
      if (e.startsWith('.')) continue;
      const p = rel ? `${rel}/${e}` : e;
      if (statSync(path.join(server.vaultDir, p)).isDirectory()) {
        out.folders.push(p);
        visit(p);
      } else out.files.push(p);
    }
  };
  visit('');
  return out;
}
const noteFiles = () => onDisk().files.filter((f) => f.endsWith('.md'));

/** A listing walked to its end, and the full answer it must equal. */
interface ListingWalk {
  readonly args: Args;
  readonly rows: (o: Out) => any[];
  readonly key: (row: any) => string;
  readonly expected: () => Promise<string[]> | string[];
}

const withoutHash = (tag: string) => tag.replace(/^#/, '');

const LISTINGS: Record<string, ListingWalk> = {
  get_links: {
    args: { path: 'Many Links.md', limit: 500 },
    rows: (o) => o.links,
    key: (l) => `${l.line}:${l.target}`,
    expected: () => range(N_LINKS).map((i) => `${i + 2}:Missing ${pad(i)}`),
  },
  get_backlinks: {
    args: { path: 'Hub.md', limit: 500 },
    rows: (o) => o.backlinks,
    key: (b) => b.source,
    expected: () => SPOKES,
  },
  get_neighborhood: {
    args: { path: 'Hub.md', depth: 1, limit: 200 },
    rows: (o) => o.notes,
    key: (n) => n.path,
    expected: () => SPOKES,
  },
  find_orphans: {
    args: { folder: 'Daily Notes', limit: 200 },
    rows: (o) => o.orphans,
    key: (n) => n.path,
    expected: () => DAILY,
  },
  audit_notes: {
    args: { classes: ['untagged'], folder: 'Spokes', limit: 200 },
    rows: (o) => o.sections.flatMap((s: Out) => s.items),
    key: (i) => i.key,
    expected: async () => {
      const probe = (await client.callTool({
        name: 'audit_notes',
        arguments: { classes: ['untagged'], folder: 'Spokes', limit: 1 },
      })) as Result;
      return probe.structuredContent?.sections[0].total === N_SPOKES ? SPOKES : ['(untagged total differs)'];
    },
  },
  list_bases: {
    args: { folder: 'Bases', limit: 500 },
    rows: (o) => o.bases,
    key: (b) => b.path,
    expected: () => range(N_BASES).map((i) => `Bases/Base ${pad(i)}.base`),
  },
  query_base: {
    args: {
      yaml: `filters: 'file.inFolder("Daily Notes")'\nviews:\n  - type: table\n    name: days\n    order: [file.name, file.mtime]\n`,
      limit: 500,
    },
    rows: (o) => o.rows,
    key: (r) => r.path,
    expected: () => DAILY,
  },
  get_tags: {
    args: { prefix: 'tag-', limit: 1000 },
    rows: (o) => o.rows,
    key: (r) => withoutHash(r.tag),
    expected: () => range(N_DAILY).map((i) => `tag-${pad(i)}`),
  },
  keyword_search: {
    args: { query: 'zebrafish', limit: 200 },
    rows: (o) => o.rows,
    key: (r) => r.path,
    expected: () => DAILY,
  },
  hybrid_search: {
    args: { query: 'zebrafish', folder: 'Daily Notes', limit: 200 },
    rows: (o) => o.rows,
    key: (r) => r.path,
    expected: () => DAILY,
  },
  semantic_search: {
    args: { query: 'zebrafish day', folder: 'Daily Notes', limit: 200 },
    rows: (o) => o.rows,
    key: (r) => r.path,
    expected: () => DAILY,
  },
  search_regex: {
    args: { pattern: 'zebrafish day \\d+', folder: 'Daily Notes', limit: 1000 },
    rows: (o) => o.results,
    key: (r) => r.path,
    expected: () => DAILY,
  },
  list_tasks: {
    args: { folder: 'Daily Notes', limit: 1000 },
    rows: (o) => o.tasks,
    key: (x) => `${x.path}:${x.line}`,
    expected: () => DAILY.map((p) => `${p}:3`),
  },
  list_notes: {
    args: { limit: 1000 },
    rows: (o) => o.notes,
    key: (n) => n.path,
    expected: noteFiles,
  },
  get_recent: {
    args: { limit: 1000 },
    rows: (o) => o.notes,
    key: (n) => n.path,
    expected: noteFiles,
  },
  list_files: {
    args: { folder: '.', recursive: true, limit: 5000 },
    rows: (o) => o.entries,
    key: (e) => `${e.kind === 'file' ? 'file' : 'folder'}:${e.path}`,
    expected: () => {
      const d = onDisk();
      return [...d.files.map((f) => `file:${f}`), ...d.folders.map((f) => `folder:${f}`)];
    },
  },
  list_revisions: {
    args: { path: 'Edited.md', limit: 200 },
    rows: (o) => o.revisions,
    key: (r) => r.revision,
    expected: async () => {
      const { rows } = await sql<{ id: string }>`
        SELECT id FROM history_revisions WHERE vault_id = ${vaultId} AND path = 'Edited.md'`.execute(db);
      return rows.map((r) => `rev-${r.id}`);
    },
  },
  list_deleted_notes: {
    args: { limit: 200 },
    rows: (o) => o.notes,
    key: (r) => r.path,
    expected: () => TRASH,
  },
  get_changes: {
    args: { since: 'ev:0', limit: 1000 },
    rows: (o) => o.events,
    key: (e) => String(e.seq),
    expected: async () => {
      const { rows } = await sql<{ seq: string }>`
        SELECT seq FROM change_events WHERE vault_id = ${vaultId}`.execute(db);
      return rows.map((r) => String(r.seq));
    },
  },
  get_recent_periodic_notes: {
    args: { granularity: 'daily', count: 1000, summary: false },
    rows: (o) => o.notes,
    key: (n) => n.path,
    expected: () => DAILY,
  },
  // A dry run's plan, paged by entry; the selection is every write above (one entry per note).
  undo_changes: {
    args: { dry_run: true },
    rows: (o) => [...o.reverted, ...o.conflicts, ...o.skipped],
    key: (e) => e.path,
    expected: () => ['Edited.md', 'Long/CJK.md', ...TRASH],
  },
  find_related: {
    args: { path: 'Hub.md', limit: 1000 },
    rows: (o) => o.related,
    key: (r) => r.path,
    expected: async () => {
      const { rows } = await sql<{ path: string }>`
        SELECT n.path FROM search_embedded_notes e JOIN notes n ON n.id = e.note_id
        WHERE e.vault_id = ${vaultId} AND n.path <> 'Hub.md'`.execute(db);
      return rows.map((r) => r.path);
    },
  },
};

/** A long document read window by window: the windows joined must be the text, computed from what was written. */
interface DocumentWalk {
  readonly args: Args;
  readonly text: (o: Out) => string;
  readonly check: (t: Test, joined: string) => void;
}

const firstRevision = async (p: string): Promise<string> => {
  const { rows } = await sql<{ id: string }>`
    SELECT min(id) AS id FROM history_revisions WHERE vault_id = ${vaultId} AND path = ${p}`.execute(db);
  return `rev-${rows[0].id}`;
};

const DOCUMENTS: Record<string, DocumentWalk> = {
  read_note: {
    args: { path: 'Long/CJK.md' },
    text: (o) => o.content,
    check: (t, joined) => t.equal(joined, CJK_EDITED, 'read_note: the windows join to the note'),
  },
  read_file: {
    args: { path: 'Long/CJK.md', encoding: 'text' },
    text: (o) => o.content,
    check: (t, joined) => t.equal(joined, CJK_EDITED, 'read_file: the windows join to the file'),
  },
  fetch: {
    args: { id: 'Long/CJK.md' },
    text: (o) => o.text,
    check: (t, joined) => t.ok(joined.includes(CJK_LINES[159].replace('知识', '学问')), 'fetch reaches the last line'),
  },
  read_revision: {
    args: { path: 'Long/CJK.md', revision: '' },
    text: (o) => o.content,
    check: (t, joined) => t.equal(joined, CJK, 'read_revision: the windows join to the revision'),
  },
  restore_revision: {
    args: { path: 'Long/CJK.md', revision: '', dry_run: true },
    text: (o) => o.diff,
    check: (t, joined) => {
      const added = joined.split('\n').filter((l) => l.startsWith('+') && !l.startsWith('+++'));
      t.same(
        added.map((l) => l.slice(1)),
        CJK.trimEnd().split('\n'),
        'restore_revision: the windows of the dry run join to one diff restoring every line',
      );
    },
  },
  diff_revisions: {
    args: { path: 'Long/CJK.md', from: '' },
    text: (o) => o.diff,
    check: (t, joined) => {
      const added = joined.split('\n').filter((l) => l.startsWith('+') && !l.startsWith('+++'));
      t.same(
        added.map((l) => l.slice(1)),
        CJK_EDITED.trimEnd().split('\n'),
        'diff_revisions: the windows join to one diff adding every edited line',
      );
    },
  },
};

/**
 * Tools that list rows but keep result_too_large, each with why it cannot page. A write's report is made
 * once: shrinking it would mean running the write again.
 */
const KEEPS_RESULT_TOO_LARGE: Record<string, string> = {
  move_note: 'a write: its report of rewritten notes is made once (shrinking it would run the move again)',
  move_file: 'a write: its report of rewritten notes is made once (shrinking it would run the move again)',
  rename_tag: 'a write: its report of the notes it changed is made once',
  get_note_outline:
    'one note’s outline, already cut to notes.read.maxChars (omitted says how many headings are left out)',
};

/** Tools walked above in their dry run, whose write keeps result_too_large, with why. */
const WRITES_KEEP_RESULT_TOO_LARGE: Record<string, string> = {
  undo_changes: 'with dry_run false its report is made once (a dry run pages its plan)',
  restore_revision: 'with dry_run false its answer has no diff (a dry run windows its diff)',
};

/** Tools whose arrays are bounded by their arguments or a fixed cap, not listings that can overflow. */
const NOT_LISTINGS: Record<string, string> = {
  create_note: 'set/removed are the frontmatter keys the call itself wrote',
  edit_note: 'set/removed are the frontmatter keys the call itself wrote',
  replace_in_note: 'set/removed are the frontmatter keys the call itself wrote',
  set_frontmatter: 'set/removed are the frontmatter keys the call itself wrote',
  manage_tags: 'set/removed are the tags the call itself named',
  get_notes_info: 'one row per path asked (read.maxBatch at most)',
  read_multiple_notes: 'one body per path asked; over the budget every body is cut and read_note reads the rest',
  read_note_lines: 'a line window already: start_line and line_count continue it',
  search: 'the connector search contract has no cursor: a fixed number of results (search.connector.results)',
};

t.test('every listing tool is walked to its end under the budget, the union equal to the full answer', async (t) => {
  const listed = (await client.listTools()).tools;
  const unclassified: string[] = [];
  for (const tool of listed) {
    const name = tool.name;
    const props = (tool.outputSchema?.properties ?? {}) as Record<string, { type?: unknown }>;
    const lists = Object.values(props).some((p) => p.type === 'array');
    const paging = registry.findTool(name)?.tool.module.paging;
    if (name in LISTINGS) {
      t.ok(paging, `${name} declares how it pages`);
      const w = LISTINGS[name];
      const pages = await walk(t, name, w.args);
      const got = union(t, name, pages, w.rows, w.key);
      const want = sorted(await w.expected());
      t.same(got, want, `${name}: the pages together are the full answer (${got.length} rows)`);
    } else if (name in DOCUMENTS) {
      t.ok(paging, `${name} declares how it windows`);
      const d = DOCUMENTS[name];
      const args = { ...d.args };
      if (name === 'read_revision' || name === 'restore_revision') args.revision = await firstRevision('Long/CJK.md');
      if (name === 'diff_revisions') args.from = await firstRevision('Long/CJK.md');
      const pages = await walk(t, name, args);
      d.check(t, pages.map(d.text).join(''));
    } else if (name in KEEPS_RESULT_TOO_LARGE) {
      t.notOk(paging, `${name} keeps result_too_large: ${KEEPS_RESULT_TOO_LARGE[name]}`);
    } else if (name in NOT_LISTINGS || !(lists || paging)) {
      // Not a listing: one answer whose size its arguments bound.
    } else unclassified.push(name);
  }
  for (const [name, why] of Object.entries(WRITES_KEEP_RESULT_TOO_LARGE))
    t.comment(`${name} keeps result_too_large when it writes: ${why}`);
  t.same(unclassified, [], 'every tool that lists rows is walked here, or named with why it keeps result_too_large');
  for (const name of [...Object.keys(LISTINGS), ...Object.keys(DOCUMENTS)])
    t.ok(
      listed.some((x) => x.name === name),
      `${name} is listed (a walk here is not silently skipped)`,
    );
});

t.test('a 2 MB note is read in windows within the budget, to its last byte', async (t) => {
  const first = (await client.callTool({ name: 'read_note', arguments: { path: 'Long/Two MB.md' } })) as Result;
  t.notOk(first.isError, 'the first window is served');
  t.ok(tokensOf(first) <= BUDGET, 'within the budget');
  const o = first.structuredContent!;
  t.ok(typeof o.next_offset === 'number' && o.next_offset > 0, 'and says where the next window starts');
  t.equal(o.total_chars, TWO_MB.length, 'the total is the whole note');
  const lastAt = TWO_MB.length - 200;
  const last = (await client.callTool({
    name: 'read_note',
    arguments: { path: 'Long/Two MB.md', offset: lastAt },
  })) as Result;
  t.equal(last.structuredContent?.content, TWO_MB.slice(lastAt), 'the last window ends the note');
  t.equal(last.structuredContent?.next_offset ?? null, null, 'with nothing after it');
});
