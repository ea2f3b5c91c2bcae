// The keyword index's text form and the query planner split compound tokens alike (index-text.ts).
import t from 'tap';
import {
  compoundWordQuery,
  indexParts,
  phraseText,
  splitCompounds,
} from '../../../plugins/search/keyword/index-text.js';
import { parseQuery, planQuery } from '../../../plugins/search/keyword/query-parse.js';

t.test('compound tokens become their words, other text is left alone', async (t) => {
  t.equal(splitCompounds('`task.due.moment` and task.isDone'), '`task due moment` and task isDone');
  t.equal(
    splitCompounds('see TaskProperties.test.md at https://github.com/o/r'),
    'see TaskProperties test md at https://github com o r',
  );
  t.equal(splitCompounds('[[Filters#Custom Filters]] v1.2.3'), '[[Filters Custom Filters]] v1 2 3');
  t.equal(splitCompounds('Ends a sentence. Starts one: e.g. this'), 'Ends a sentence. Starts one: e g. this');
  t.equal(splitCompounds('plain words, pop-up, due_date'), 'plain words, pop-up, due_date');
});

t.test('note text: CJK runs become a vector of bigrams, the rest has its compound tokens split', async (t) => {
  const parts = indexParts('保持健康 task.due 盐');
  t.equal(parts.text, '  task due  ');
  // Each run's bigrams and its last character in order, a gap between runs; every CJK character counts once.
  t.equal(parts.cjk, "'保持':1 '持健':2 '健康':3 '康':4 '盐':6");
  t.equal(parts.words, 2 + 5);
  t.same(indexParts('plain words'), { text: 'plain words', cjk: '', words: 2 });
  // A lexeme keeps at most 256 positions (as in a tsvector), and no position passes 16383.
  const many = indexParts('好的，'.repeat(300));
  t.equal(many.cjk.split(' ')[0].split(',').length, 256);
  const long = indexParts(`${'字'.repeat(17000)}末尾`);
  t.match(long.cjk, /'末尾':16383/);
  // A character outside the BMP (two code units) is one character of a bigram, and counts once.
  const astral = indexParts('𠀀𠀁中 x 𠀀');
  t.equal(astral.cjk, "'𠀀𠀁':1 '𠀁中':2 '中':3 '𠀀':5");
  t.equal(astral.words, 1 + 4);
  t.equal(phraseText('read task.due here'), 'read task due here');
});

t.test('a compound query word is the phrase of its words', async (t) => {
  t.equal(compoundWordQuery('task.due.moment'), '"task due moment"');
  t.equal(compoundWordQuery('moment'), 'moment');
  const q = 'Which fields does task.due have?';
  const plan = planQuery(parseQuery(q), q, true);
  const texts = plan.units.map((u) => u.text);
  t.ok(texts.includes('fields') && texts.includes('"task due"'), texts.join(' | '));
  const neg = planQuery(parseQuery('alpha -foo.bar'), 'alpha -foo.bar', true);
  t.same(neg.negated, ['"foo bar"']);
});
