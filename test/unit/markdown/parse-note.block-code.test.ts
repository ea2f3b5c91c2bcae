// The model carries its block code's text (fenced and indented) for the keyword index, while chunks keep leaving it out.
import t from 'tap';
import { parseNote } from '../../../src/markdown/index.js';
import { keywordText } from '../../../plugins/search/keyword/note-text.js';

t.test('block code is in the model and in the keyword body, not in the chunks', async (t) => {
  const m = parseNote('# Setup\n\nRun the installer.\n\n```sh\nkubectl apply -f ingress.yaml\n```\n\n    indented_thing --flag\n', { path: 'a.md' });
  t.match(m.blockCode, /kubectl apply -f ingress\.yaml/);
  t.match(m.blockCode, /indented_thing --flag/);
  t.notMatch(m.chunks.map((c) => c.text).join('\n'), /kubectl/);
  const k = keywordText(m, { headChars: 160, bodyChars: 200_000 });
  t.match(k.body, /Run the installer\.[\s\S]*kubectl apply/, 'prose first, then the code');
  t.equal(k.head.startsWith('Setup Run the installer.'), true);
  t.equal(parseNote('no code here\n', { path: 'b.md' }).blockCode, undefined);
});
