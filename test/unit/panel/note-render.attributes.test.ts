// The panel's note view puts wikilink markup into text nodes only (issue 35): a wikilink written where
// markdown makes an attribute (an image's alt text, a link's title) comes out as plain escaped text in
// that attribute, never as markup that could close it; in text it is still a link.
import t from 'tap';
import { renderNote, type TargetResolver } from '../../../src/panel/note-render.js';

const resolve: TargetResolver = async (targets) => new Map(targets.map((x) => [x, `${x}.md`]));

t.test('a wikilink inside an image alt or a link title stays text in the attribute', async (t) => {
  const out = await renderNote(
    '![see [[Quarks]] here](pic.png)\n\n[x](https://example.test "t [[Quarks]]")\n\nand [[Quarks]] in text\n',
    'n.md',
    resolve,
  );
  const tags = out.match(/<[^>]*>/g) ?? [];
  for (const tag of tags.filter((x) => x.startsWith('<img') || x.includes('title=')))
    t.notMatch(tag, /wikilink|\/admin\/notes|&lt;a/, `no link markup inside ${tag}`);
  t.match(out, /<img src="pic\.png" alt="see Quarks here"/, 'the alt text holds the link text, escaped');
  t.match(out, /title="t Quarks"/);
  t.match(out, /and <a class="wikilink" href="\/admin\/notes\/Quarks\.md">Quarks<\/a> in text/, 'text still links');
});

t.test('an alias with quotes inside an attribute is escaped', async (t) => {
  const out = await renderNote('![a [[Q|x" onerror="y]] b](p.png)\n', 'n.md', resolve);
  t.notMatch(out, /onerror="y"/);
  t.match(out, /alt="a x&quot; onerror=&quot;y b"/);
});
