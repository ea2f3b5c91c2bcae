// No tool result exceeds the result budget (tools.maxResultTokens), measured by an independent cl100k
// tokenizer (gpt-tokenizer) over text and structuredContent together, on the corpus: CJK notes, an 826 KB
// SVG as text and as base64, listings of hundreds of entries. Every cut answer says how to continue, and
// following its continuation reaches the end of the content, with nothing lost or repeated.
import t, { type Test } from 'tap';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import { CORPORA, FULL_CORPORA } from '../../fixtures/corpus.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';
import { parseRefusalLine } from '../../../src/sdk/refusals.js';

const BUDGET = 12_000; // the default of tools.maxResultTokens

// The vault: the three vendored tasks vaults (410 notes) plus, from the full corpus when it lies beside the
// checkout, its largest Chinese note and SVG drawings (else the vendored Chinese notes only).
const staging = mkdtempSync(path.join(os.tmpdir(), 'exo-budget-vault-'));
for (const name of [
  'obsidian-tasks-demo',
  'obsidian-tasks-docs',
  'obsidian-tasks-contributing',
  'oldwinter-knowledge-garden',
])
  cpSync(path.join(CORPORA, name), path.join(staging, name), { recursive: true });
const garden = path.join(FULL_CORPORA, 'oldwinter-knowledge-garden');
const extras: Record<string, string> = {
  'cjk/largest.md': path.join(garden, 'Sources/Books/微信读书同步/生活百科/魔鬼约会学-阮琦.md'),
  'drawings/big.svg': path.join(garden, 'Atlas/Draws/数字时代如何更好地工作与生活 - 图.dark.svg'),
};
const files: Record<string, Uint8Array> = {};
for (const [to, from] of Object.entries(extras)) if (existsSync(from)) files[to] = readFileSync(from);
const full = Object.keys(files).length === 2;
t.teardown(() => rmSync(staging, { recursive: true, force: true }));

const server = await startTestServer({
  copyVaultFrom: staging,
  files,
  config: { index: { watch: false, reconcileSeconds: 0 } },
});
t.teardown(() => server.close());
const client = await server.connect();
const index = server.host.services.named.get('index') as IndexService;
await index.whenReady(server.host.vaultHandle.id, 120_000);

interface Result {
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** Tokens a model may read from one result: each text block and the structuredContent JSON, counted by gpt-tokenizer. */
function tokensOf(r: Result): number {
  let n = 0;
  for (const c of r.content) if (c.type === 'text' && c.text) n += countTokens(c.text);
  if (r.structuredContent) n += countTokens(JSON.stringify(r.structuredContent));
  return n;
}

const largest = new Map<string, number>();

async function call(t: Test, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const r = (await client.callTool({ name, arguments: args })) as Result;
  const text = r.content.find((c) => c.type === 'text')?.text ?? '';
  t.notOk(r.isError, `${name} answers (${r.isError ? parseRefusalLine(text)?.code : 'ok'})`);
  const tokens = tokensOf(r);
  largest.set(name, Math.max(largest.get(name) ?? 0, tokens));
  if (tokens > BUDGET)
    t.fail(`${name}(${JSON.stringify(args).slice(0, 120)}) is ${tokens} tokens, over the budget of ${BUDGET}`);
  const s = r.structuredContent ?? {};
  if (s.continue_with) {
    t.match(
      text,
      /Cut to fit the result budget of 12000 tokens \(tools\.maxResultTokens\)/,
      `${name}: a cut answer says so in its text`,
    );
    t.match(s.budget_notice, /Continue with/, `${name}: and names the call that continues`);
  }
  return s;
}

/** Follow the cut notice's continue_with (or the tool's own continuation when the budget did not cut) to the end. */
async function walk(
  t: Test,
  name: string,
  args: Record<string, unknown>,
  own: (s: Record<string, unknown>, a: Record<string, unknown>) => Record<string, unknown> | undefined,
  max = 200,
) {
  const pages: Array<Record<string, unknown>> = [];
  let next: Record<string, unknown> | undefined = args;
  let cut = false;
  while (next && pages.length < max) {
    const s = await call(t, name, next);
    pages.push(s);
    const cw = s.continue_with as { tool: string; arguments: Record<string, unknown> } | undefined;
    if (cw) {
      cut = true;
      t.equal(cw.tool, name);
    }
    next = cw ? cw.arguments : own(s, next);
  }
  t.ok(pages.length < max, `${name} reaches the end within ${max} calls`);
  return { pages, cut };
}

/** The largest .md file under `dir`, as a path relative to it (the vendored corpus keeps its notes in subfolders). */
function largestMarkdown(dir: string, rel = ''): string {
  let best = { path: '', size: -1 };
  for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const sub = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) {
      const inner = largestMarkdown(dir, sub);
      if (inner) {
        const size = statSync(path.join(dir, inner)).size;
        if (size > best.size) best = { path: inner, size };
      }
    } else if (e.name.endsWith('.md')) {
      const size = statSync(path.join(dir, sub)).size;
      if (size > best.size) best = { path: sub, size };
    }
  }
  return best.path;
}

t.test('read_note on the largest CJK note: every window fits, and next_offset walks the whole body', async (t) => {
  const p = full
    ? 'cjk/largest.md'
    : `oldwinter-knowledge-garden/${largestMarkdown(path.join(CORPORA, 'oldwinter-knowledge-garden'))}`;
  const raw = readFileSync(path.join(server.vaultDir, p), 'utf8');
  const { pages, cut } = await walk(t, 'read_note', { path: p }, (s, a) =>
    s.next_offset === undefined ? undefined : { ...a, offset: s.next_offset },
  );
  if (full) t.ok(cut && pages.length > 2, `the ${raw.length}-character note came in ${pages.length} windows`);
  const body = pages.map((s) => s.content as string).join('');
  t.equal(body.length, pages[0].total_chars, 'the windows add up to the whole body');
  t.ok(raw.endsWith(body), 'and are the note body, in order, nothing lost or repeated');
});

t.test(
  'fetch on the largest CJK note: metadata.next_offset walks the whole text',
  { skip: !full && 'the full corpus is not beside the checkout' },
  async (t) => {
    const raw = readFileSync(path.join(server.vaultDir, 'cjk/largest.md'), 'utf8');
    const { pages, cut } = await walk(t, 'fetch', { id: 'cjk/largest.md' }, (s, a) => {
      const m = s.metadata as { next_offset?: number };
      return m.next_offset === undefined ? undefined : { ...a, offset: m.next_offset };
    });
    t.ok(cut, 'the budget cut it');
    const text = pages
      .map((s) => (s.text as string).replace(/\n\n\[… cut at character \d+ of \d+; continue with fetch\(.*\)\]$/s, ''))
      .join('');
    t.equal(text, raw, 'the pieces are the whole note, in order');
  },
);

t.test(
  'read_file of an 826 KB SVG: text and base64 windows fit and continue from next_offset',
  { skip: !full && 'the full corpus is not beside the checkout' },
  async (t) => {
    const bytes = readFileSync(path.join(server.vaultDir, 'drawings/big.svg'));
    for (const encoding of ['text', 'base64'] as const) {
      // Walk the first windows and check they join up; the whole file is ~100 windows of each kind.
      let args: Record<string, unknown> | undefined = { path: 'drawings/big.svg', encoding };
      const got: Buffer[] = [];
      const read = () => got.reduce((n, b) => n + b.length, 0);
      for (let i = 0; i < 3 && args; i++) {
        const s = await call(t, 'read_file', args);
        t.equal(
          s.offset,
          encoding === 'text' ? Buffer.concat(got).toString('utf8').length : read(),
          `${encoding} window ${i} starts where the last one stopped`,
        );
        got.push(Buffer.from(s.content as string, encoding === 'text' ? 'utf8' : 'base64'));
        // The first window is cut by the budget and names the call that continues (with the lowered limit);
        // later ones fit at that limit, and their next_offset continues.
        const cw = s.continue_with as { arguments: Record<string, unknown> } | undefined;
        if (i === 0) t.ok(cw, `${encoding}: the first window is cut by the budget and says how to continue`);
        t.ok(s.truncated && typeof s.next_offset === 'number', `${encoding} window ${i} has a next_offset`);
        args = cw ? cw.arguments : { ...args, offset: s.next_offset };
      }
      t.ok(
        Buffer.concat(got).equals(bytes.subarray(0, read())),
        `${encoding}: the windows are the file's first ${read()} bytes, in order`,
      );
    }
  },
);

t.test('read_file walks a long text file to its end', async (t) => {
  const p = 'obsidian-tasks-docs/Queries/Filters.md';
  const raw = readFileSync(path.join(server.vaultDir, p), 'utf8');
  const { pages } = await walk(t, 'read_file', { path: p, encoding: 'text' }, (s, a) =>
    s.truncated ? { ...a, offset: s.next_offset } : undefined,
  );
  t.equal(pages.map((s) => s.content as string).join(''), raw, 'the windows are the whole file');
});

function entriesOnDisk(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(path.join(dir, rel))) {
    if (name.startsWith('.')) continue;
    const r = rel ? `${rel}/${name}` : name;
    out.push(r);
    if (statSync(path.join(dir, r)).isDirectory()) out.push(...entriesOnDisk(dir, r));
  }
  return out;
}

t.test('list_files at limit 1000: pages fit and the offsets list every entry once', async (t) => {
  const { pages, cut } = await walk(t, 'list_files', { recursive: true, limit: 1000 }, (s, a) =>
    s.next_offset === undefined ? undefined : { ...a, offset: s.next_offset },
  );
  t.ok(cut, 'the budget cut the page');
  const listed = pages.flatMap((s) => (s.entries as Array<{ path: string }>).map((e) => e.path));
  t.equal(new Set(listed).size, listed.length, 'no entry twice');
  t.same(listed.sort(), entriesOnDisk(server.vaultDir).sort(), 'every entry of the vault');
});

t.test('list_notes at limit 500: pages fit and the cursors list every note once', async (t) => {
  const { pages, cut } = await walk(t, 'list_notes', { limit: 500, order_by: 'path' }, (s, a) =>
    s.next_cursor ? { ...a, cursor: s.next_cursor } : undefined,
  );
  t.ok(cut, 'the budget cut the page');
  const listed = pages.flatMap((s) => (s.notes as Array<{ path: string }>).map((n) => n.path));
  t.equal(new Set(listed).size, listed.length, 'no note twice');
  t.equal(
    listed.length,
    entriesOnDisk(server.vaultDir).filter((p) => p.endsWith('.md')).length,
    'every note of the vault',
  );
});

t.test('get_changes at limit 500: pages fit and next_since walks every event once', async (t) => {
  // The first build records no events: make 600, each a note written through the index as our tools do.
  const vaultId = server.host.vaultHandle.id;
  for (let i = 0; i < 600; i++) {
    const p = `feed/a folder with a longer name/note number ${i}.md`;
    mkdirSync(path.dirname(path.join(server.vaultDir, p)), { recursive: true });
    writeFileSync(path.join(server.vaultDir, p), `# Note ${i}\n`);
    await index.noteWritten(vaultId, p);
  }
  const { pages, cut } = await walk(t, 'get_changes', { since: 'ev:0', limit: 500 }, (s, a) =>
    s.more ? { ...a, since: s.next_since } : undefined,
  );
  t.ok(cut, 'the budget cut the page');
  const seqs = pages.flatMap((s) => (s.events as Array<{ seq: number }>).map((e) => e.seq));
  t.same(
    seqs,
    [...seqs].sort((a, b) => a - b),
    'in order',
  );
  t.equal(new Set(seqs).size, seqs.length, 'no event twice');
  t.equal(seqs[seqs.length - 1], pages[pages.length - 1].last_event, 'up to the last event');
});

t.test('audit_notes at limit 200: pages fit and next_offset shows every item of every class', async (t) => {
  const { pages, cut } = await walk(t, 'audit_notes', { limit: 200 }, (s, a) =>
    s.next_offset === undefined ? undefined : { ...a, offset: s.next_offset },
  );
  t.ok(cut, 'the budget cut the page');
  const first = pages[0].sections as Array<{ class: string; total: number }>;
  for (const sec of first) {
    const keys = pages.flatMap((p) =>
      (p.sections as Array<{ class: string; items: Array<{ key: string }> }>)
        .find((x) => x.class === sec.class)!
        .items.map((i) => i.key),
    );
    t.equal(new Set(keys).size, sec.total, `${sec.class}: all ${sec.total} items shown across the pages, each once`);
  }
});

t.test('figures', async (t) => {
  for (const [name, tokens] of [...largest].sort())
    t.comment(`largest ${name} result: ${tokens} tokens (cl100k, text + structuredContent)`);
  t.pass();
});
