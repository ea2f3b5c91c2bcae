// move_file and move_note's link rewrite through the real server (files + notes families): embeds and
// links follow a moved attachment, only target text changes (CRLF, YAML quoting, #subpath, |display kept),
// ambiguous/dangling/code occurrences are listed and left alone, a move onto an existing path changes nothing.
import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { corpus } from '../../fixtures/corpus.js';
import { refusalOf } from '../../../src/host/testing/testkit.js';
import { startTestServer } from '../../../src/host/testing/harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const plugins = ['files', 'notes'].map((f) => path.resolve(here, `../../../plugins/${f}`));
const garden = corpus('oldwinter-knowledge-garden');
const files: Record<string, string | Buffer> = {
  'Cards/PPV.md': readFileSync(path.join(garden, 'Cards/永久笔记/PPV.md')),
  'Atlas/Canvas/PPV人生管理系统.canvas': readFileSync(path.join(garden, 'Atlas/Canvas/PPV人生管理系统.canvas')),
  'img/diagram.png': Buffer.from([0x89, 0x50, 0x4e, 0x47]),
  'img/other.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 1]),
  'notes/Use.md':
    '---\r\ncover: "[[diagram.png]]"\r\n---\r\n![[diagram.png#center|300]] ![[img/diagram.png]] ![](../img/diagram.png) `![[diagram.png]]`\r\n',
  'Books.base': 'views:\n  - type: table\n    name: View\n',
  'Reading.md': '![[Books.base#View]] [[./Books.base|base]]\n',
  'a/Plan.md': 'plan\n',
  'b/Ideas.md': 'ideas\n',
  'x/Dup.md': 'one\n',
  'y/Dup.md': 'two\n',
  'Linker.md': '[[Plan#^blk|shown]] [[Dup]] [[nowhere/Plan]] `[[Plan]]`\n',
};
const server = await startTestServer({
  builtinDir: null,
  files,
  config: { plugins, index: { watch: false, reconcileSeconds: 0 } },
});
t.teardown(() => server.close());
const client = await server.connect();
type Result = { isError?: boolean; content?: unknown; structuredContent?: any };
const call = async (name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as Result;
const disk = (p: string) => readFileSync(path.join(server.vaultDir, p), 'utf8');

t.test('move_file.rewrites-embeds: every embed and link of the file follows it, nothing else changes', async (t) => {
  const before = disk('notes/Use.md');
  const dry = await call('move_file', {
    from_path: 'img/diagram.png',
    to_path: 'assets/diagram v2.png',
    dry_run: true,
  });
  t.notOk(dry.isError);
  t.equal(dry.structuredContent.moved, false);
  t.match(dry.structuredContent.diff, /diagram v2\.png/);
  t.equal(disk('notes/Use.md'), before, 'a dry run writes nothing');
  t.ok(existsSync(path.join(server.vaultDir, 'img/diagram.png')));

  const r = await call('move_file', { from_path: 'img/diagram.png', to_path: 'assets/diagram v2.png' });
  t.notOk(r.isError);
  t.equal(r.structuredContent.moved, true);
  t.equal(
    disk('notes/Use.md'),
    '---\r\ncover: "[[diagram v2.png]]"\r\n---\r\n![[diagram v2.png#center|300]] ![[assets/diagram v2.png]] ![](../assets/diagram%20v2.png) `![[diagram.png]]`\r\n',
  );
  t.same(
    r.structuredContent.left_alone.map((a: any) => [a.reason, a.raw]),
    [['code', '![[diagram.png]]']],
  );
  t.ok(existsSync(path.join(server.vaultDir, 'assets/diagram v2.png')));
});

t.test('move_file.corpus-canvas: renaming the corpus canvas rewrites its embed in PPV.md', async (t) => {
  const before = disk('Cards/PPV.md');
  const r = await call('move_file', {
    from_path: 'Atlas/Canvas/PPV人生管理系统.canvas',
    to_path: 'Atlas/Canvas/PPV.canvas',
  });
  t.notOk(r.isError);
  t.equal(disk('Cards/PPV.md'), before.replace('![[PPV人生管理系统.canvas]]', '![[PPV.canvas]]'));
});

t.test(
  'move_file.unique-name-unchanged: a bare name still unique is left alone; a relative one is re-aimed',
  async (t) => {
    const r = await call('move_file', { from_path: 'Books.base', to_path: 'Bases/Books.base' });
    t.notOk(r.isError);
    t.equal(disk('Reading.md'), '![[Books.base#View]] [[./Bases/Books.base|base]]\n');
  },
);

t.test('move_file.no-clobber: a move onto an existing path fails and changes nothing', async (t) => {
  const use = disk('notes/Use.md');
  const r = await call('move_file', { from_path: 'assets/diagram v2.png', to_path: 'img/other.png' });
  t.equal(refusalOf(r)?.code, 'already_exists');
  t.equal(disk('notes/Use.md'), use);
  t.ok(existsSync(path.join(server.vaultDir, 'assets/diagram v2.png')));
  t.equal(
    refusalOf(await call('move_file', { from_path: 'Linker.md', to_path: 'L2.md' }))?.code,
    'markdown_not_allowed',
  );
});

t.test('move_note.refuses-attachments: a non-note path points to move_file', async (t) => {
  const r = await call('move_note', { from_path: 'img/other.png', to_path: 'img/renamed.png' });
  const refusal = refusalOf(r);
  t.equal(refusal?.code, 'not_a_note');
  t.equal(refusal?.instead, 'move_file');
});

t.test(
  'move_note.shared-name: the rewritten link carries the path; ambiguous, dangling and code are listed',
  async (t) => {
    const r = await call('move_note', { from_path: 'a/Plan.md', to_path: 'a/Ideas.md', rewrite_links: true });
    t.notOk(r.isError);
    t.equal(disk('Linker.md'), '[[a/Ideas#^blk|shown]] [[Dup]] [[nowhere/Plan]] `[[Plan]]`\n');
    t.same(
      r.structuredContent.left_alone.map((a: any) => [a.reason, a.raw]),
      [
        ['dangling', '[[nowhere/Plan]]'],
        ['code', '[[Plan]]'],
      ],
    );
    const dup = await call('move_note', { from_path: 'x/Dup.md', to_path: 'z/Dup.md', rewrite_links: true });
    t.same(
      dup.structuredContent.ambiguous.map((a: any) => [a.raw, a.candidates]),
      [['[[Dup]]', ['y/Dup.md', 'z/Dup.md']]],
    );
    t.equal(
      disk('Linker.md'),
      '[[a/Ideas#^blk|shown]] [[Dup]] [[nowhere/Plan]] `[[Plan]]`\n',
      'the ambiguous link is not rewritten',
    );
  },
);
