// Tags, tasks and chunks rules that fixtures do not pin on their own.
import t from 'tap';
import { estimateTokens, parseNote, tagIdentity } from '../../../src/markdown/index.js';

t.test('tag identity is case-insensitive and keeps the original spelling', async (t) => {
  t.equal(tagIdentity('#Project/Alpha'), 'project/alpha');
  const m = parseNote(
    '---\ntags: [Work, "#Home"]\ntag: a b,c\n---\n#Work and #work and #Écoute #1984 #y1984 (#in-paren)',
    { path: 'n.md' },
  );
  t.same(
    m.tags.map((x) => [x.tag, x.display, x.source]),
    [
      ['work', 'Work', 'frontmatter'],
      ['home', 'Home', 'frontmatter'],
      ['a', 'a', 'frontmatter'],
      ['b', 'b', 'frontmatter'],
      ['c', 'c', 'frontmatter'],
      ['work', 'Work', 'inline'],
      ['work', 'work', 'inline'],
      ['écoute', 'Écoute', 'inline'],
      ['y1984', 'y1984', 'inline'],
    ],
  );
});

t.test('tags never come from code, links, URLs or HTML attributes', async (t) => {
  const m = parseNote(
    '`#code` [[Note#heading]] https://x.org/#frag <span style="color: #fff">x</span> [a](#anchor) ok #yes',
    { path: 'n.md' },
  );
  t.same(
    m.tags.map((x) => x.tag),
    ['yes'],
  );
});

t.test('task fields and description', async (t) => {
  const m = parseNote(
    '# H\n## Sub\n  - [>] Call Bob #phone 🔁 every day when done ✅ 2024-01-05 🏁 delete ⛔ a1, b2 🔼',
    { path: 'n.md' },
  );
  const [task] = m.tasks;
  t.equal(task.status, '>');
  t.equal(task.statusType, 'other');
  t.equal(task.text, 'Call Bob #phone');
  t.equal(task.recurrence, 'every day when done');
  t.equal(task.done, '2024-01-05');
  t.same(task.dependsOn, ['a1', 'b2']);
  t.equal(task.priority, 'medium');
  t.equal(task.headingPath, 'H/Sub');
  t.same(task.tags, ['phone']);
});

t.test('chunks respect the token budget, carry the section ordinal and the prefix', async (t) => {
  const para = (n: number) => `Paragraph ${n} ${'word '.repeat(40)}`;
  const text = `intro\n\n# Title A\n\n${[1, 2, 3, 4].map(para).join('\n\n')}\n\n\`\`\`\ncode is left out\n\`\`\`\n## Sub B\n\n${para(5)}`;
  const m = parseNote(text, { path: 'dir/Doc.md', chunkTokens: 128 });
  t.ok(m.chunks.length >= 4);
  for (const c of m.chunks) t.ok(c.tokenEstimate <= 128 + 4, `chunk ${c.ordinal} within budget (${c.tokenEstimate})`);
  t.same([...new Set(m.chunks.map((c) => c.sectionOrdinal))], [0, 1, 2]);
  t.ok(m.chunks.find((c) => c.sectionOrdinal === 2)?.text.startsWith('Doc > Title A > Sub B\n\n'));
  t.notOk(m.chunks.some((c) => c.text.includes('code is left out')));
  const overlapping = parseNote(text, { path: 'dir/Doc.md', chunkTokens: 128, chunkOverlap: 20 });
  const a = overlapping.chunks.filter((c) => c.sectionOrdinal === 1);
  t.ok(a.length >= 2);
  t.ok(a[1].start < a[0].end, 'the second chunk starts inside the first');
  const cjk = parseNote('中'.repeat(3000), { path: 'c.md', chunkTokens: 512 });
  t.ok(cjk.chunks.length >= 6, 'CJK text is split by its own token weight');
});

t.test('estimateTokens and wordCount', async (t) => {
  t.equal(estimateTokens(''), 0);
  t.equal(estimateTokens('abcd'), 1);
  t.equal(estimateTokens('中文'), 2);
  t.equal(parseNote('---\na: b c d\n---\nOne two, three 中文', { path: 'w.md' }).wordCount, 5);
});

t.test('title falls back to the file stem; aliases accept lists and comma strings', async (t) => {
  t.equal(parseNote('x', { path: 'a/b/My Note.md' }).title, 'My Note');
  t.equal(parseNote('---\ntitle: ""\n---\n', { path: 'a/T.md' }).title, 'T');
  t.same(parseNote('---\naliases:\n  - One\n  - 2\nalias: Three, Four\n---\n', { path: 'a.md' }).aliases, [
    'One',
    '2',
    'Three',
    'Four',
  ]);
});
