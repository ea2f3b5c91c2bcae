// The panel's pure parts: the html template escapes every value, the SVG chart escapes its labels and
// scales its bars, the post-sign-in redirect stays under /admin, and note links point at the panel only
// over https.
import t from 'tap';
import { html, raw } from '../../../src/host/panel/html.js';
import { stackedBars } from '../../../src/host/panel/chart.js';
import { safeNext } from '../../../src/host/panel/server.js';
import { noteViewUrl } from '../../../src/sdk/note-view-url.js';

t.test('html escapes interpolations unless they are Html', async (t) => {
  const evil = `<script>alert("x")</script>&'`;
  t.equal(
    html`<p title="${evil}">${evil}</p>`.value,
    '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</p>',
  );
  t.equal(
    html`<ul>${['a<', 'b'].map((x) => html`<li>${x}</li>`)}</ul>`.value,
    '<ul><li>a&lt;</li><li>b</li></ul>',
    'arrays of Html join unescaped, their values escaped',
  );
  t.equal(
    html`${raw('<b>ok</b>')}${null}${undefined}${false}${0}`.value,
    '<b>ok</b>0',
    'raw passes; null, undefined and false vanish',
  );
});

t.test('stackedBars: scaled bars, escaped labels, one title per bar', async (t) => {
  const svg = stackedBars(
    [
      { label: '10:00', counts: { read_note: 3, '<x>': 1 } },
      { label: '11:00', counts: { read_note: 1 } },
    ],
    ['read_note', '<x>'],
    { title: 'calls "per" hour', width: 200, height: 100 },
  ).value;
  t.match(svg, /aria-label="calls &quot;per&quot; hour"/);
  t.notMatch(svg, /<x>/, 'a series name is escaped');
  t.match(svg, /<title>10:00: 4 calls<\/title>/);
  const heights = [...svg.matchAll(/<rect x="[^"]+" y="[^"]+" width="[^"]+" height="([\d.]+)"/g)].map((m) =>
    Number(m[1]),
  );
  t.equal(heights.length, 3, 'one rect per non-zero count');
  t.ok(Math.abs(heights[0] - 3 * heights[2]) < 0.2, 'bar heights are proportional to counts');
  t.doesNotThrow(() => stackedBars([], [], { title: 'empty' }), 'an empty window draws an empty chart');
});

t.test('safeNext keeps the redirect after sign-in on the panel', async (t) => {
  t.equal(safeNext('/admin/usage?window=7d'), '/admin/usage?window=7d');
  t.equal(safeNext('/admin'), '/admin');
  for (const bad of ['https://evil.example/admin', '//evil.example/admin', '/adminx', '/mcp', '/admin\\..\\x', ''])
    t.equal(safeNext(bad), '/admin/', `refuses ${JSON.stringify(bad)}`);
});

t.test('noteViewUrl: the panel note view over https only', async (t) => {
  t.equal(
    noteViewUrl('https://notes.example.org', 'Projects/My Plan #1.md'),
    'https://notes.example.org/admin/notes/Projects/My%20Plan%20%231.md',
  );
  t.equal(noteViewUrl('https://notes.example.org/', 'a.md'), 'https://notes.example.org/admin/notes/a.md');
  t.equal(noteViewUrl('http://127.0.0.1:8080', 'a.md'), undefined);
  t.equal(noteViewUrl(null, 'a.md'), undefined);
});
