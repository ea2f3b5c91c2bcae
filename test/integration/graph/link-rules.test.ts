// Obsidian's link rules through the real graph tools (docs/links.md): a shared basename is ambiguous for
// every candidate, a bare alias is no backlink, an attachment with a #subpath resolves to the file, a
// folder-qualified link never falls back to the bare name. Vault: corpus copies plus hand-written notes.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { corpus } from '../../fixtures/corpus.js';
import { startTestServer } from '../../../src/host/testing/harness.js';
import type { IndexService } from '../../../src/sdk/index-service.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const garden = corpus('oldwinter-knowledge-garden');
const demo = corpus('obsidian-tasks-demo');
const copy = (p: string) => readFileSync(path.join(garden, p), 'utf8');
const files: Record<string, string> = {
  // From the corpus: a bare link to a basename two notes share, and an embedded canvas.
  'Calendar/Daily notes/2023-05-04.md': copy('Calendar/Daily notes/2023-05-04.md'),
  'Calendar/Daily notes/国人如何使用chatGPT.md': copy('Calendar/Daily notes/国人如何使用chatGPT.md'),
  'Spaces/AI/国人如何使用chatGPT.md': 'the second note of that name\n',
  'Cards/PPV.md': copy('Cards/永久笔记/PPV.md'),
  'Atlas/Canvas/PPV人生管理系统.canvas': copy('Atlas/Canvas/PPV人生管理系统.canvas'),
  'Test Data/yaml_1_alias.md': readFileSync(path.join(demo, 'Test Data/yaml_1_alias.md'), 'utf8'),
  // Written for the rules the corpus has no example of.
  'Aliases.md': 'Bare alias [[YAML Alias 1]]; display text [[yaml_1_alias|YAML Alias 1]].\n',
  'Books.base': 'views:\n  - type: table\n    name: View\n',
  'Bases.md': '![[Books.base#View]] and ![[missing.png]] and [[Books]]\n',
  'Paths.md': '[[Test Data/yaml_1_alias]] [[Elsewhere/yaml_1_alias]]\n',
};
const server = await startTestServer({
  builtinDir: null,
  files,
  config: { plugins: [path.join(root, 'plugins/graph')], index: { watch: false, reconcileSeconds: 0 } },
});
t.teardown(() => server.close());
const index = server.host.services.named.get('index') as IndexService | undefined;
if (!index) throw new Error('these tests need the host index');
await index.whenReady(server.host.vaultHandle.id, 30_000);
const client = await server.connect();
const data = async (name: string, args: Record<string, unknown>) => {
  const r = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    structuredContent?: any;
    content?: any;
  };
  if (r.isError) throw new Error(JSON.stringify(r.content));
  return r.structuredContent;
};
const twins = ['Calendar/Daily notes/国人如何使用chatGPT.md', 'Spaces/AI/国人如何使用chatGPT.md'];

t.test(
  'get_backlinks.shared-basename: the link is reported for both notes as ambiguous, with both candidates',
  async (t) => {
    for (const p of twins) {
      const o = await data('get_backlinks', { path: p });
      t.equal(o.total, 1, p);
      t.equal(o.ambiguous, 1, `${p}: counted as ambiguous, not as a backlink`);
      t.equal(o.backlinks[0].source, 'Calendar/Daily notes/2023-05-04.md');
      t.same([...o.backlinks[0].candidates].sort(), twins);
    }
    const links = await data('get_links', { path: 'Calendar/Daily notes/2023-05-04.md' });
    t.equal(links.links[0].status, 'ambiguous');
    t.equal(links.links[0].resolved_path, null, 'no candidate is chosen');
  },
);

t.test('get_backlinks.bare-alias: a bare alias is dangling, the display-text form is a backlink', async (t) => {
  const o = await data('get_backlinks', { path: 'Test Data/yaml_1_alias.md' });
  t.same(o.backlinks.map((b: any) => b.text).sort(), ['[[Test Data/yaml_1_alias]]', '[[yaml_1_alias|YAML Alias 1]]']);
  const links = await data('get_links', { path: 'Aliases.md' });
  t.same(
    links.links.map((l: any) => l.status),
    ['dangling', 'resolved'],
  );
});

t.test(
  'get_links.attachment-subpath: ![[x.base#View]] resolves to the .base file; a missing image is dangling',
  async (t) => {
    const o = await data('get_links', { path: 'Bases.md' });
    t.same(
      o.links.map((l: any) => [l.target, l.status, l.resolved_path, l.anchor]),
      [
        ['Books.base', 'attachment', 'Books.base', 'View'],
        ['missing.png', 'dangling', null, null],
        ['Books', 'dangling', null, null],
      ],
    );
    t.same(o.counts, { resolved: 0, ambiguous: 0, attachment: 1, dangling: 2 });
    const canvas = await data('get_links', { path: 'Cards/PPV.md' });
    t.ok(
      canvas.links.some(
        (l: any) => l.status === 'attachment' && l.resolved_path === 'Atlas/Canvas/PPV人生管理系统.canvas',
      ),
      'the corpus canvas embed',
    );
    const back = await data('get_backlinks', { path: 'Books.base' });
    t.same(
      back.backlinks.map((b: any) => [b.source, b.text]),
      [['Bases.md', '![[Books.base#View]]']],
    );
  },
);

t.test(
  'get_links.path-no-fallback: a folder-qualified target that matches no path dangles even when the name exists',
  async (t) => {
    const o = await data('get_links', { path: 'Paths.md' });
    t.same(
      o.links.map((l: any) => [l.target, l.status]),
      [
        ['Test Data/yaml_1_alias', 'resolved'],
        ['Elsewhere/yaml_1_alias', 'dangling'],
      ],
    );
  },
);

t.test('find_orphans.ambiguous-candidates: no note an ambiguous link may mean is an orphan', async (t) => {
  const o = await data('find_orphans', { limit: 500 });
  const paths = o.orphans.map((r: any) => r.path);
  for (const p of twins) t.notOk(paths.includes(p), p);
  t.ok(paths.includes('Aliases.md') === false, 'Aliases.md links to a note');
  const audit = await data('audit_notes', { classes: ['dangling_links', 'ambiguous_links'] });
  const dangling = audit.sections.find((s: any) => s.class === 'dangling_links').items.map((i: any) => i.key);
  t.ok(dangling.includes('missing.png'), 'a missing attachment is a dangling link');
  t.ok(dangling.includes('YAML Alias 1'), 'a bare alias is a dangling link');
  t.notOk(dangling.includes('Books.base'));
  const ambiguous = audit.sections.find((s: any) => s.class === 'ambiguous_links').items.map((i: any) => i.key);
  t.same(ambiguous, ['国人如何使用chatGPT']);
});
