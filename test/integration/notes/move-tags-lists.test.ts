// move_note link rewriting, tag edits, regex replace with a time budget, listings, periodic notes,
// stats, resources and prompts, through the SDK client on a temp copy of a corpus vault.
import t from 'tap';
import { corpus as corpusPath, notesOnDisk } from '../../fixtures/corpus.js';
import path from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { refusalOf, textOf } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const notes = path.resolve(here, '../../../plugins/notes');
const corpus = corpusPath('obsidian-tasks-contributing');

const d = new Date();
const today = `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
const files: Record<string, string> = {
  'Zoo/Target.md': '---\naliases: [Tgt]\n---\n# Target\nSee [sibling](../Zoo/Other.md) and [[Other]].\n',
  'Zoo/Other.md': 'other\n',
  'A/Linker.md':
    'Links: [[Target]], [[Target|shown]], [[Zoo/Target#Target]], ![[Target]], [md](../Zoo/Target.md#x), `[[Target]]` in code.\n',
  'B/Target.md': 'another note with the same stem\n',
  'B/Near.md': 'bare [[Target]] here resolves to B/Target (same folder)\n',
  'Tags/One.md':
    '---\ntags: [proj, proj/sub, other]\n---\nText #proj and #proj/deep and #project and `#proj` in code.\n```\n#proj\n```\n',
  'Tags/Two.md': 'Only #Proj inline\n',
  'Regex.md': 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\nfoo-1 foo-2\n',
  [`Daily Notes/${today}.md`]: 'today\n',
};
const server = await startTestServer({
  builtinDir: null,
  copyVaultFrom: corpus,
  files,
  config: { plugins: [notes], vault: { obsidianName: 'My Vault' }, notes: { regex: { timeoutMs: 300 } } },
});
t.teardown(() => server.close());
const index = server.host.services.named.get('index') as IndexService | undefined;
if (index) await index.whenReady(server.host.vaultHandle.id, 20_000);
const client = await server.connect();
type CallResult = { isError?: boolean; content?: unknown; structuredContent?: unknown };
const call = async (name: string, args: Record<string, unknown>): Promise<CallResult> =>
  (await client.callTool({ name, arguments: args })) as CallResult;
const data = <T = Record<string, any>>(r: CallResult): T => {
  if (r.isError) throw new Error(textOf(r));
  return r.structuredContent as T;
};
const disk = (p: string) => readFileSync(path.join(server.vaultDir, p), 'utf8');

t.test('move_note rewrites exactly the links that resolved to the moved note', async (t) => {
  const dry = data(
    await call('move_note', {
      from_path: 'Zoo/Target.md',
      to_path: 'New/Renamed.md',
      rewrite_links: true,
      dry_run: true,
    }),
  );
  t.equal(dry.moved, false);
  t.ok(disk('Zoo/Target.md'));
  const r = data(
    await call('move_note', { from_path: 'Zoo/Target.md', to_path: 'New/Renamed.md', rewrite_links: true }),
  );
  t.equal(r.moved, true);
  // Bare [[Target]] could mean Zoo/Target or B/Target: ambiguous, so reported and left alone.
  t.equal(
    disk('A/Linker.md'),
    'Links: [[Target]], [[Target|shown]], [[New/Renamed#Target]], ![[Target]], [md](../New/Renamed.md#x), `[[Target]]` in code.\n',
  );
  t.equal(r.ambiguous.length, 4);
  t.same(r.rewritten_notes, [{ path: 'A/Linker.md', links: 2 }]);
  t.equal(
    disk('B/Near.md'),
    'bare [[Target]] here resolves to B/Target (same folder)\n',
    'a link to the other same-stem note is untouched',
  );
  t.equal(
    disk('New/Renamed.md'),
    '---\naliases: [Tgt]\n---\n# Target\nSee [sibling](../Zoo/Other.md) and [[Other]].\n',
    'own relative link still resolves from the new folder',
  );
  t.equal(
    refusalOf(await call('move_note', { from_path: 'New/Renamed.md', to_path: 'Zoo/Other.md' }))!.code,
    'already_exists',
  );
  t.equal(
    refusalOf(
      await call('move_note', {
        from_path: 'New/Renamed.md',
        to_path: 'X.md',
        expected_hash: 'sha256:' + 'a'.repeat(64),
      }),
    )!.code,
    'stale_precondition',
  );
});

t.test('manage_tags and rename_tag; the reverse rename restores the notes byte for byte', async (t) => {
  const before1 = disk('Tags/One.md');
  const before2 = disk('Tags/Two.md');
  const r = data(await call('rename_tag', { old_tag: 'proj', new_tag: 'work' }));
  t.equal(r.notes.length, 2);
  t.equal(
    disk('Tags/One.md'),
    '---\ntags: [work, work/sub, other]\n---\nText #work and #work/deep and #project and `#proj` in code.\n```\n#proj\n```\n',
  );
  t.equal(disk('Tags/Two.md'), 'Only #work inline\n');
  data(await call('rename_tag', { old_tag: 'work', new_tag: 'proj' }));
  t.equal(disk('Tags/One.md'), before1, 'reverse rename restores the note byte for byte');
  t.equal(disk('Tags/Two.md'), before2.replace('#Proj', '#proj'));
  const add = data(await call('manage_tags', { path: 'Tags/Two.md', action: 'add', tag: '#fresh' }));
  t.equal(add.changed, true);
  t.equal(disk('Tags/Two.md'), '---\ntags:\n  - fresh\n---\n' + disk('Tags/Two.md').split('---\n')[2]);
  t.equal(data(await call('manage_tags', { path: 'Tags/Two.md', action: 'add', tag: 'fresh' })).changed, false);
  data(await call('manage_tags', { path: 'Tags/Two.md', action: 'add', tag: 'inl', location: 'inline' }));
  t.match(disk('Tags/Two.md'), /\n#inl\n$/);
  data(await call('manage_tags', { path: 'Tags/Two.md', action: 'remove', tag: 'inl', location: 'inline' }));
  t.notMatch(disk('Tags/Two.md'), /#inl/);
});

t.test('replace_in_note: literal, regex with groups, catastrophic regex stopped', async (t) => {
  const r = data(
    await call('replace_in_note', {
      path: 'Regex.md',
      pattern: 'foo-(\\d)',
      replacement: 'bar$1',
      is_regex: true,
      max_occurrences: 1,
    }),
  );
  t.equal(r.replacements, 1);
  t.match(disk('Regex.md'), /bar1 foo-2/);
  const started = Date.now();
  const slow = refusalOf(
    await call('replace_in_note', { path: 'Regex.md', pattern: '(a+)+$', replacement: 'x', is_regex: true }),
  )!;
  t.equal(slow.code, 'regex_timeout');
  t.ok(Date.now() - started < 5000);
  t.equal(
    data(await call('replace_in_note', { path: 'Regex.md', pattern: 'foo-2', replacement: 'baz' })).replacements,
    1,
  );
  t.equal(
    refusalOf(await call('replace_in_note', { path: 'Regex.md', pattern: '(', replacement: '', is_regex: true }))!.code,
    'invalid_arguments',
  );
});

t.test('list_notes pages with a cursor; get_recent; stats', async (t) => {
  const first = data(await call('list_notes', { limit: 5, order_by: 'path' }));
  t.equal(first.notes.length, 5);
  t.ok(first.next_cursor);
  t.match(first.notes[0].deep_link, /^obsidian:\/\/open\?vault=My%20Vault&file=/);
  const second = data(await call('list_notes', { limit: 5, order_by: 'path', cursor: first.next_cursor }));
  t.ok(second.notes[0].path > first.notes[4].path);
  const inFolder = data(await call('list_notes', { folder: 'Tags', limit: 50 }));
  t.same(inFolder.notes.map((n: { path: string }) => n.path).sort(), ['Tags/One.md', 'Tags/Two.md']);
  t.equal(refusalOf(await call('list_notes', { cursor: 'garbage!' }))!.code, 'invalid_arguments');
  const recent = data(await call('get_recent', { limit: 3 }));
  t.equal(recent.notes.length, 3);
  t.equal(recent.source, index ? 'index' : 'filesystem');
  data(await call('create_note', { path: 'Fresh/Just Written.md', content: '#fresh-tag hello\n' }));
  const after = data(await call('get_recent', { limit: 1, order_by: 'content_changed' }));
  t.equal(after.notes[0].path, 'Fresh/Just Written.md', 'write-through: the next listing sees the new note');
  if (index) t.same(after.notes[0].tags, ['fresh-tag']);
  const stats = data(await call('get_vault_stats', {}));
  t.equal(stats.notes, notesOnDisk(server.vaultDir).length);
  t.ok(stats.words > 100);
});

t.test('periodic notes', async (t) => {
  const p = data(await call('get_periodic_note', { granularity: 'daily' }));
  t.equal(p.path, `Daily Notes/${today}.md`);
  t.equal(p.content, 'today\n');
  const y = data(await call('get_periodic_note', { granularity: 'yearly', offset: -1 }));
  t.equal(y.exists, false);
  const c = data(await call('get_periodic_note', { granularity: 'monthly', create_if_missing: true }));
  t.equal(c.created, true);
  const recent = data(await call('get_recent_periodic_notes', { granularity: 'daily', count: 3 }));
  t.equal(recent.notes[0].path, `Daily Notes/${today}.md`);
});

t.test("periodic notes follow the vault's own .obsidian/daily-notes.json", async (t) => {
  const { mkdirSync, writeFileSync, rmSync } = await import('node:fs');
  mkdirSync(path.join(server.vaultDir, '.obsidian'), { recursive: true });
  writeFileSync(
    path.join(server.vaultDir, '.obsidian/daily-notes.json'),
    JSON.stringify({ folder: 'Journal', format: 'YYYY-MM-DD' }),
  );
  t.teardown(() => rmSync(path.join(server.vaultDir, '.obsidian/daily-notes.json')));
  const p = data(await call('get_periodic_note', { granularity: 'daily' }));
  t.equal(p.path, `Journal/${today}.md`);
  t.match(p.config_source, /daily-notes/);
});

t.test('resources and prompts', async (t) => {
  const guide = await client.readResource({ uri: 'vault://guide' });
  t.match(String((guide.contents[0] as { text?: string }).text), /Wikilinks/);
  const note = await client.readResource({ uri: 'vault://note/Tags/Two.md' });
  t.match(String((note.contents[0] as { text?: string }).text), /content_hash: sha256:/);
  const { prompts } = await client.listPrompts();
  t.same(prompts.map((p) => p.name).sort(), ['daily_review', 'summarize_note', 'vault_health_check', 'weekly_review']);
  const sp = await client.getPrompt({ name: 'summarize_note', arguments: { path: 'Tags/Two.md' } });
  t.match(JSON.stringify(sp.messages), /get_note_outline/);
  writeFileSync(path.join(server.vaultDir, 'AGENTS.md'), 'agents file\n');
  t.match(textOf(await call('get_vault_guide', {})), /agents file/);
});
