// Pure pieces of the search family: query parsing, RRF, confidence, snippets, head, URL rule.
import t from 'tap';
import { parseQuery, anyQueryText } from '../../../plugins/search/keyword/query-parse.js';
import { headOf } from '../../../plugins/search/keyword/note-text.js';
import { reciprocalRankFusion, confidenceOf } from '../../../plugins/search/ranking/rrf.js';
import { shapeSnippet } from '../../../plugins/search/ranking/snippet.js';
import { orderByScores } from '../../../plugins/search/ranking/rerank.js';
import { urlProblem } from '../../../plugins/search/embeddings/http.js';
import { canonical } from '../../../plugins/search/embeddings/service.js';

t.test('parseQuery splits units, phrases, negations and OR', async (t) => {
  const p = parseQuery('alpha "beta gamma" -delta -"eps zeta" OR alpha');
  t.same(p.units, ['alpha', '"beta gamma"']);
  t.same(p.negated, ['delta', '"eps zeta"']);
  t.equal(p.hasOr, true);
  t.equal(anyQueryText(parseQuery('a b "c d"')), 'a OR b OR "c d"');
  t.equal(parseQuery('  Project   Phoenix ').exact, 'project phoenix');
});

t.test('RRF sums 1/(k+rank) per arm and breaks ties deterministically', async (t) => {
  const fused = reciprocalRankFusion({ keyword: [1, 2, 3], semantic: [3, 1] }, 60);
  t.same(fused.map((r) => r.id), [1, 3, 2]);
  t.equal(fused[0].score, 1 / 61 + 1 / 62);
  t.same(fused[0].ranks, { keyword: 1, semantic: 2 });
  t.same(fused[2].terms, { keyword: 1 / 62 });
  t.same(reciprocalRankFusion({ a: [] }, 60), []);
});

t.test('confidence is ok when off, with full keyword matches, or above the threshold', async (t) => {
  t.equal(confidenceOf(0, 0.1, 0), 'ok');
  t.equal(confidenceOf(0.5, 0.1, 2), 'ok');
  t.equal(confidenceOf(0.5, 0.6, 0), 'ok');
  t.equal(confidenceOf(0.5, 0.4, 0), 'low');
  t.equal(confidenceOf(0.5, undefined, 0), 'low');
});

t.test('snippets keep «» balanced and bounded', async (t) => {
  t.equal(shapeSnippet('no marks', 50), null);
  t.equal(shapeSnippet(null, 50), null);
  const long = `${'word '.repeat(100)}«hit» ${'tail '.repeat(100)}`;
  const s = shapeSnippet(long, 80)!;
  t.ok(s.length <= 82, `length ${s.length}`);
  t.match(s, /«hit»/);
  t.match(s, /^…/);
  t.equal((s.match(/«/g) ?? []).length, (s.match(/»/g) ?? []).length);
});

t.test('head cuts at a word boundary', async (t) => {
  t.equal(headOf('# Title\n\nshort body', 100), 'Title short body');
  const h = headOf('alpha beta gamma delta epsilon', 14);
  t.equal(h, 'alpha beta…');
});

t.test('rerank order and fingerprint canonical form', async (t) => {
  t.same(orderByScores([0.1, 0.9, 0.5, 0.9]), [1, 3, 2, 0]);
  t.equal(canonical({ b: 1, a: { d: 2, c: [1] } }), '{"a":{"c":[1],"d":2},"b":1}');
});

t.test('embedding URLs: https or loopback unless plaintext is allowed', async (t) => {
  t.equal(urlProblem('https://api.example.com/v1', false), undefined);
  t.equal(urlProblem('http://127.0.0.1:11434', false), undefined);
  t.equal(urlProblem('http://[::1]:8080', false), undefined);
  t.match(urlProblem('http://10.0.0.5:11434', false), /plaintext/);
  t.equal(urlProblem('http://10.0.0.5:11434', true), undefined);
  t.match(urlProblem('not a url', false), /not a URL/);
});
