// Pure pieces of keyword ranking's optional stages: RM3's relevance model and its gate (feedback.ts), and the
// proximity bonus (proximity.ts). The ranker applying them is driven through the server in test/integration/search.
import t from 'tap';
import { feedbackApplies, relevanceModel } from '../../../plugins/search/keyword/feedback.js';
import { parseTsvector } from '../../../plugins/search/keyword/memory-index.js';
import { minDistance, proximityBonus } from '../../../plugins/search/keyword/proximity.js';
import { parseQuery, planQuery } from '../../../plugins/search/keyword/query-parse.js';

const on = { feedbackDocs: 10, feedbackTerms: 10, feedbackWeight: 0.5, feedbackMinTerms: 3 };

t.test('the relevance model weighs each note by its score and its length, keeps the most probable words', async (t) => {
  const model = relevanceModel(
    [
      { score: 3, vector: parseTsvector("'cach':1A,4 'redi':2,5,9 'evict':7 '2024':3 'x':8") },
      { score: 1, vector: parseTsvector("'redi':1 'cluster':2") },
      { score: 0, vector: parseTsvector("'ignor':1") },
    ],
    3,
  );
  t.same(
    model.map((m) => m.lexeme),
    ['redi', 'cach', 'cluster'],
    'redis is most probable; numbers, one-letter words and zero-score notes give no term',
  );
  t.equal(Math.round(model.reduce((a, m) => a + m.weight, 0) * 1e9) / 1e9, 1, 'the weights are renormalised');
  t.ok(model[0].weight > model[1].weight);
  t.same(relevanceModel([], 10), []);
});

t.test('feedback is for multi-word questions, never for lookups, OR, quotes or negations', async (t) => {
  const plan = (q: string) => [planQuery(parseQuery(q), q, true), parseQuery(q)] as const;
  const [p1, q1] = plan('how do I keep redis from evicting cached sessions');
  t.ok(feedbackApplies(p1, q1, on, false));
  t.notOk(feedbackApplies(p1, q1, on, true), 'not when an exact title or a phrase already answered it');
  t.notOk(feedbackApplies(p1, q1, { ...on, feedbackDocs: 0 }, false), 'off by default');
  t.notOk(feedbackApplies(p1, q1, { ...on, feedbackWeight: 1 }, false), 'a weight of 1 is the query alone');
  const [p2, q2] = plan('redis cache');
  t.notOk(feedbackApplies(p2, q2, on, false), 'too few units');
  const [p3, q3] = plan('redis OR memcached OR valkey');
  t.notOk(feedbackApplies(p3, q3, on, false));
  const [p4, q4] = plan('"redis cache" eviction policy');
  t.notOk(feedbackApplies(p4, q4, on, false));
  const [p5, q5] = plan('redis cache eviction -memcached');
  t.notOk(feedbackApplies(p5, q5, on, false));
});

t.test('proximity: the fewest positions between two different units, and a bonus that fades with it', async (t) => {
  t.equal(
    minDistance([
      [1, 40],
      [10, 43],
    ]),
    3,
  );
  t.equal(minDistance([[5, 6, 7]]), Number.POSITIVE_INFINITY, 'one unit has no pair');
  t.equal(minDistance([]), Number.POSITIVE_INFINITY);
  t.equal(proximityBonus(Number.POSITIVE_INFINITY, 0.3), 0);
  t.equal(proximityBonus(1, 0), 0, 'α 0 is off');
  const adjacent = proximityBonus(1, 0.3);
  t.ok(Math.abs(adjacent - Math.log((0.3 + Math.exp(-1)) / 0.3)) < 1e-12);
  t.ok(adjacent > proximityBonus(3, 0.3) && proximityBonus(3, 0.3) > proximityBonus(20, 0.3));
  t.ok(proximityBonus(20, 0.3) < 1e-6, 'far apart is as good as no pair');
});
