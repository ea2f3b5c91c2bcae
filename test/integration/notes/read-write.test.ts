// The notes family end to end through the SDK client: reads, section addressing, the precondition
// ladder, edit modes, dry runs, frontmatter edits that keep comments, soft delete, and bad input.
import t from 'tap';
import { countTokens } from '../../../src/markdown/index.js';
import path from 'node:path';
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { refusalOf, textOf } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const notes = path.resolve(here, '../../../plugins/notes');

const files: Record<string, string | Uint8Array> = {
  'Plan.md':
    '---\n# keep me\ntitle: "The Plan"   # trailing\n\ntags: [a, b]\nstatus: draft\n---\n# Plan\nIntro #inline\n## Risks\nrisk one\n## Steps\nstep one\n### Sub\nsub text\n## Risks\nsecond risks\n',
  'Dup.md': '# A\n## X\none\n# B\n## X\ntwo\n',
  'Plain.md': 'no frontmatter here\nline two\n',
  'Fence.md': '# H\n  ```\ncode never closed\n# After\n',
  'Bad.md': '---\nkey: [unclosed\n---\n# H\nbody\n',
  'Binary.md': new Uint8Array([0x23, 0x20, 0xff, 0xfe, 0x0a]),
  'Long.md': '# One\n' + 'x'.repeat(3000) + '\n# Two\n' + 'y'.repeat(3000) + '\n',
  'CLAUDE.md': 'Use kebab-case names.\n',
  'Emoji.md': 'a🙂b🙂🙂c\n',
};
const server = await startTestServer({
  builtinDir: null,
  files,
  config: { plugins: [notes], notes: { read: { maxChars: 1000 }, write: { maxNoteBytes: 100_000 } } },
});
t.teardown(() => server.close());
const client = await server.connect();
type CallResult = { isError?: boolean; content?: unknown; structuredContent?: unknown };
const call = async (name: string, args: Record<string, unknown>): Promise<CallResult> =>
  (await client.callTool({ name, arguments: args })) as CallResult;
const data = <T = Record<string, any>>(r: CallResult): T => {
  if (r.isError) throw new Error(textOf(r));
  return r.structuredContent as T;
};
const disk = (p: string) => readFileSync(path.join(server.vaultDir, p), 'utf8');

t.test('tools/list: every tool has a schema with all four hints', async (t) => {
  const { tools } = await client.listTools();
  for (const name of [
    'read_note',
    'read_multiple_notes',
    'get_notes_info',
    'get_note_outline',
    'read_note_lines',
    'get_vault_guide',
    'create_note',
    'edit_note',
    'set_frontmatter',
    'delete_note',
  ]) {
    const tool = tools.find((x) => x.name === name);
    t.ok(tool, name);
    t.equal(typeof tool?.annotations?.readOnlyHint, 'boolean');
    t.ok(tool?.outputSchema, `${name} has an outputSchema`);
    t.ok((tool?.description ?? '').length <= 1600, `${name} description is short`);
  }
});

t.test('read_note: whole read strips frontmatter and reports hash, title, tags, yaml', async (t) => {
  const r = data(await call('read_note', { path: 'Plan' }));
  t.equal(r.path, 'Plan.md');
  t.match(r.content_hash, /^sha256:[0-9a-f]{64}$/);
  t.equal(r.title, 'The Plan');
  t.same(r.tags, ['a', 'b', 'inline']);
  t.match(r.frontmatter_yaml, /# keep me/);
  t.equal(r.frontmatter.status, 'draft');
  t.ok(r.content.startsWith('# Plan\n'));
  t.equal(r.truncated, false);
  t.equal(r.token_estimate, await countTokens(r.content), 'token_estimate is the cl100k count of the content');
  t.ok(r.token_estimate > 0 && r.token_estimate < r.content.length);
});

t.test('read_note sections: text, ordinal, path form, ambiguity and not-found as data', async (t) => {
  t.equal(
    data(await call('read_note', { path: 'Plan.md', section: 'Steps' })).content,
    'step one\n### Sub\nsub text\n',
  );
  t.equal(data(await call('read_note', { path: 'Plan.md', section: '#4' })).content, 'sub text\n');
  t.equal(data(await call('read_note', { path: 'Dup.md', section: 'B/X' })).content, 'two\n');
  const amb = refusalOf(await call('read_note', { path: 'Plan.md', section: 'Risks' }))!;
  t.equal(amb.code, 'section_ambiguous');
  t.same(amb.candidates, ['#2', '#5']);
  const nf = refusalOf(await call('read_note', { path: 'Plan.md', section: 'Nope' }))!;
  t.equal(nf.code, 'section_not_found');
  t.ok((nf.candidates as string[]).length === 5);
  t.equal(refusalOf(await call('read_note', { path: 'Plan.md', section: '#99' }))!.code, 'section_not_found');
});

t.test(
  'read_note pages through emoji with any limit: every window a step forward, no pair split past one unit',
  async (t) => {
    const body = 'a🙂b🙂🙂c\n';
    for (const limit of [1, 2, 3]) {
      let offset = 0;
      let read = '';
      for (let step = 0; step < 20; step++) {
        const r = data(await call('read_note', { path: 'Emoji.md', offset, limit }));
        if (limit > 1)
          t.notMatch(r.content, /[\ud800-\udbff]$/, `limit ${limit}: no window ends on a pair's first half`);
        read += r.content;
        if (r.next_offset === undefined) break;
        t.ok(r.next_offset > offset, `limit ${limit}: a step forward from ${offset}`);
        offset = r.next_offset;
      }
      t.equal(read, body, `limit ${limit}: the windows join into the note`);
    }
  },
);

t.test('read_note windows long notes and offers an outline with ordinals', async (t) => {
  const r = data(await call('read_note', { path: 'Long.md' }));
  t.equal(r.truncated, true);
  t.equal(r.content.length, 1000);
  t.equal(r.next_offset, 1000);
  t.same(
    r.outline.map((e: { ordinal: string }) => e.ordinal),
    ['#1', '#2'],
  );
  const next = data(await call('read_note', { path: 'Long.md', offset: 1000, limit: 10 }));
  t.equal(next.content.length, 10);
  t.equal(refusalOf(await call('read_note', { path: 'Long.md', offset: 999999 }))!.code, 'invalid_arguments');
  t.equal(refusalOf(await call('read_note', { path: 'Long.md', offset: r.total_chars }))!.code, 'invalid_arguments');
});

t.test('bad paths and bytes are refused', async (t) => {
  symlinkSync(path.join(server.vaultDir, 'Plain.md'), path.join(server.vaultDir, 'Link.md'));
  t.equal(refusalOf(await call('read_note', { path: '../etc/passwd' }))!.code, 'invalid_path');
  t.equal(refusalOf(await call('read_note', { path: 'a/./b.md' }))!.code, 'invalid_path');
  t.equal(refusalOf(await call('read_note', { path: '.obsidian/x.md' }))!.code, 'invalid_path');
  t.equal(refusalOf(await call('read_note', { path: 'Binary.md' }))!.code, 'not_utf8');
  t.equal(refusalOf(await call('read_note', { path: 'Missing.md' }))!.code, 'not_found');
  t.equal(refusalOf(await call('edit_note', { path: 'Link.md', content: 'x' }))!.code, 'is_symlink');
});

t.test('batch reads, info, outline, lines, guide', async (t) => {
  const m = data(await call('read_multiple_notes', { paths: ['Plan.md', 'Missing.md'], summary: true, head_chars: 5 }));
  t.equal(m.notes[0].head, '# Pla');
  t.equal(m.notes[1].error.code, 'not_found');
  const info = data(await call('get_notes_info', { paths: ['Plan.md'] }));
  t.equal(info.notes[0].headings, 5);
  t.same(info.notes[0].frontmatter_keys, ['title', 'tags', 'status']);
  const o = data(await call('get_note_outline', { path: 'Plan.md' }));
  t.equal(o.total, 5);
  const lines = data(await call('read_note_lines', { path: 'Plan.md', start_line: 8, line_count: 2 }));
  t.equal(lines.content, '# Plan\nIntro #inline');
  const g = await call('get_vault_guide', {});
  t.match(textOf(g), /kebab-case/);
  t.match(textOf(g), /Wikilinks/);
});

t.test('create_note: .md added, no-clobber, hash refused before any work', async (t) => {
  const r = data(await call('create_note', { path: 'New/Idea', content: 'hello\n' }));
  t.equal(r.path, 'New/Idea.md');
  t.equal(disk('New/Idea.md'), 'hello\n');
  t.equal(refusalOf(await call('create_note', { path: 'New/Idea.md', content: 'x' }))!.code, 'already_exists');
  t.equal(
    refusalOf(await call('create_note', { path: 'Other.md', content: 'x', expected_hash: r.content_hash }))!.code,
    'no_incumbent',
  );
  t.equal(
    refusalOf(await call('create_note', { path: 'Other.md', content: 'x', expected_hash: 'sha256:nope' }))!.code,
    'malformed_precondition',
  );
  t.equal(
    refusalOf(await call('create_note', { path: 'Big.md', content: 'x'.repeat(200_000) }))?.code ?? 'other',
    'too_large',
  );
});

t.test('edit_note: full replace keeps the frontmatter block byte-identical', async (t) => {
  const before = disk('Plan.md');
  const fm = before.slice(0, before.indexOf('---\n', 4) + 4);
  const r = data(await call('edit_note', { path: 'Plan.md', content: '# New body\n', dry_run: true }));
  t.equal(r.dry_run, true);
  t.match(r.diff, /\+# New body/);
  t.equal(disk('Plan.md'), before, 'dry run wrote nothing');
  const w = data(await call('edit_note', { path: 'Plan.md', content: '# Plan\nnew\n## Risks\nr\n## Risks\nr2\n' }));
  t.equal(disk('Plan.md'), fm + '# Plan\nnew\n## Risks\nr\n## Risks\nr2\n');
  t.match(w.previous_hash, /^sha256:/);
});

t.test('the precondition ladder: malformed, stale (before dry run and no-op), then success', async (t) => {
  const cur = data(await call('read_note', { path: 'Plain.md' })).content_hash;
  t.equal(
    refusalOf(await call('edit_note', { path: 'Missing.md', content: 'x', expected_hash: 'bad' }))!.code,
    'malformed_precondition',
  );
  const stale = 'sha256:' + '0'.repeat(64);
  const s = refusalOf(
    await call('edit_note', {
      path: 'Plain.md',
      content: 'no frontmatter here\nline two\n',
      dry_run: true,
      expected_hash: stale,
    }),
  )!;
  t.equal(s.code, 'stale_precondition');
  t.equal(s.currentHash, cur);
  t.equal(s.current_hash, cur, "the current hash under the argument's own spelling");
  t.equal(s.nothing_written, true);
  const same = data(
    await call('edit_note', { path: 'Plain.md', content: 'no frontmatter here\nline two\n', expected_hash: cur }),
  );
  t.equal(same.changed, false);
  const ok = data(await call('edit_note', { path: 'Plain.md', append: true, content: 'three', expected_hash: cur }));
  t.equal(disk('Plain.md'), 'no frontmatter here\nline two\nthree');
  t.not(ok.content_hash, cur);
});

t.test('edit_note modes: find 0/2 matches, replace_all, mode conflicts, sections', async (t) => {
  writeFileSync(path.join(server.vaultDir, 'F.md'), 'a b a\n# S\nold\n# T\nkeep\n');
  t.equal(refusalOf(await call('edit_note', { path: 'F.md', find: 'zzz', content: 'y' }))!.code, 'find_not_found');
  t.equal(refusalOf(await call('edit_note', { path: 'F.md', find: 'a', content: 'y' }))!.code, 'find_ambiguous');
  t.equal(data(await call('edit_note', { path: 'F.md', find: 'a', content: 'c', replace_all: true })).replacements, 2);
  t.equal(
    refusalOf(await call('edit_note', { path: 'F.md', find: 'c', section: 'S', content: 'y' }))!.code,
    'invalid_arguments',
  );
  t.equal(
    refusalOf(await call('edit_note', { path: 'F.md', section: 'S', replace_frontmatter: true, content: 'y' }))!.code,
    'invalid_arguments',
  );
  data(await call('edit_note', { path: 'F.md', section: 'S', content: 'new' }));
  t.equal(disk('F.md'), 'c b c\n# S\nnew\n# T\nkeep\n');
  t.equal(refusalOf(await call('edit_note', { path: 'Fence.md', section: 'H', content: 'y' }))!.code, 'unclosed_fence');
  t.equal(
    refusalOf(await call('edit_note', { path: 'Bad.md', section: 'H', content: 'y' }))!.code,
    'malformed_frontmatter',
  );
  t.equal(
    refusalOf(await call('edit_note', { path: 'Dup.md', section: 'X', content: 'y' }))!.code,
    'section_ambiguous',
  );
});

t.test('set_frontmatter keeps comments, order and quoting; type-sensitive no-ops', async (t) => {
  writeFileSync(path.join(server.vaultDir, 'Y.md'), '---\n# c1\na: "q"  # c2\n\nb: 1\nflag: true\n---\nbody\n');
  const r = data(await call('set_frontmatter', { path: 'Y.md', updates: { b: 2, z: ['x'] } }));
  t.same(r.set, ['b', 'z']);
  t.equal(disk('Y.md'), '---\n# c1\na: "q"  # c2\n\nb: 2\nflag: true\nz:\n  - x\n---\nbody\n');
  t.equal(data(await call('set_frontmatter', { path: 'Y.md', updates: { flag: true } })).changed, false);
  t.equal(data(await call('set_frontmatter', { path: 'Y.md', updates: { flag: 1 } })).changed, true);
  data(await call('set_frontmatter', { path: 'Y.md', remove: ['a', 'b', 'flag', 'z'] }));
  t.equal(disk('Y.md'), 'body\n');
  data(await call('set_frontmatter', { path: 'Y.md', updates: { k: 'v' } }));
  t.equal(disk('Y.md'), '---\nk: v\n---\nbody\n');
  t.equal(
    refusalOf(await call('set_frontmatter', { path: 'Bad.md', updates: { a: 1 } }))!.code,
    'malformed_frontmatter',
  );
});

t.test('delete_note: soft delete into .trash, permanent unlink, stale refused', async (t) => {
  writeFileSync(path.join(server.vaultDir, 'D.md'), 'bye\n');
  t.equal(
    refusalOf(await call('delete_note', { path: 'D.md', expected_hash: 'sha256:' + '1'.repeat(64) }))!.code,
    'stale_precondition',
  );
  const r = data(await call('delete_note', { path: 'D.md' }));
  t.match(r.trash_path, /^\.trash\//);
  t.equal(readFileSync(path.join(server.vaultDir, r.trash_path), 'utf8'), 'bye\n');
  writeFileSync(path.join(server.vaultDir, 'E.md'), 'bye\n');
  t.equal(data(await call('delete_note', { path: 'E.md', permanent: true })).permanent, true);
  t.equal(refusalOf(await call('read_note', { path: 'E.md' }))!.code, 'not_found');
});

t.test('a read-only key cannot write', async (t) => {
  const ro = await server.connect({ key: server.readKey });
  const r = (await ro.callTool({ name: 'create_note', arguments: { path: 'RO.md', content: 'x' } })) as CallResult;
  t.equal(refusalOf(r)!.code, 'read_only');
});
