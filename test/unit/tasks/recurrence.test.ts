// Recurrence rules as the Tasks plugin reads them: parsing, next dates (month/year ends clamped, when done,
// other dates keeping their distance) and the next occurrence's line text.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { corpus } from '../../fixtures/corpus.js';
import { nextOccurrence, parseRecurrence } from '../../../plugins/tasks/recurrence.js';
import { nextOccurrenceLine, readFields, TASK_LINE } from '../../../plugins/tasks/task-line.js';

const due = (rule: string, d: string, today = '2024-06-10') =>
  nextOccurrence(parseRecurrence(rule)!, { due: d, scheduled: null, start: null }, today)?.due;

t.test('parses the rules the Tasks plugin documents, refuses the rest', async (t) => {
  t.match(parseRecurrence('every day'), { freq: 'day', interval: 1, whenDone: false });
  t.match(parseRecurrence('every 3 days when done'), { freq: 'day', interval: 3, whenDone: true });
  t.match(parseRecurrence('every weekday'), { freq: 'week', weekdays: [0, 1, 2, 3, 4] });
  t.match(parseRecurrence('every week on Monday, Wednesday and Friday'), { freq: 'week', weekdays: [0, 2, 4] });
  t.match(parseRecurrence('every Tuesday'), { freq: 'week', weekdays: [1] });
  t.match(parseRecurrence('every month on the 1st and 15th'), { freq: 'month', monthDays: [1, 15] });
  t.match(parseRecurrence('every month on the last'), { monthDays: [-1] });
  t.match(parseRecurrence('every month on the last Friday'), { nthWeekdays: [[-1, 4]] });
  t.match(parseRecurrence('every 2 months on the 2nd Tuesday'), { interval: 2, nthWeekdays: [[2, 1]] });
  t.match(parseRecurrence('every April and December on the 1st and 24th'), {
    freq: 'year',
    months: [4, 12],
    monthDays: [1, 24],
  });
  t.match(parseRecurrence('Every  Year'), { freq: 'year', interval: 1 });
  for (const bad of [
    '',
    'daily',
    'every',
    'every blue moon',
    'every 0 days',
    'every day on Monday',
    'every month on the 32nd',
    'every week on the 3rd',
  ]) {
    t.equal(parseRecurrence(bad), null, `"${bad}" is not a rule`);
  }
});

t.test('next dates follow rrule and the plugin’s month-end clamping', async (t) => {
  t.equal(due('every day', '2024-06-10'), '2024-06-11');
  t.equal(due('every 3 days', '2024-02-28'), '2024-03-02');
  t.equal(due('every week', '2024-06-10'), '2024-06-17');
  t.equal(due('every 2 weeks', '2024-12-25'), '2025-01-08');
  t.equal(due('every weekday', '2024-06-14'), '2024-06-17', 'Friday → Monday');
  t.equal(due('every weekday', '2024-06-15'), '2024-06-17', 'Saturday → Monday');
  t.equal(due('every week on Monday and Thursday', '2024-06-10'), '2024-06-13');
  t.equal(due('every 2 weeks on Monday', '2024-06-12'), '2024-06-24', 'next Monday of an on-interval week');
  t.equal(due('every Sunday', '2024-06-10'), '2024-06-16');
  t.equal(due('every month', '2024-01-31'), '2024-02-29', 'clamped to the month end (leap year)');
  t.equal(due('every month', '2023-01-31'), '2023-02-28');
  t.equal(due('every 3 months', '2024-11-30'), '2025-02-28');
  t.equal(due('every month on the 31st', '2024-01-31'), '2024-03-31', 'a fixed day skips months without it');
  t.equal(due('every month on the last', '2024-01-31'), '2024-02-29');
  t.equal(due('every month on the 25th', '2024-06-25'), '2024-07-25');
  t.equal(due('every month on the 25th', '2024-06-10'), '2024-06-25', 'the first matching day after the reference');
  t.equal(due('every month on the last Friday', '2024-06-28'), '2024-07-26');
  t.equal(due('every month on the 2nd Tuesday', '2024-06-11'), '2024-07-09');
  t.equal(due('every year', '2024-02-29'), '2025-02-28');
  t.equal(due('every 2 years', '2024-03-01'), '2026-03-01');
  t.equal(due('every April and December on the 1st and 24th', '2024-04-24'), '2024-12-01');
  t.equal(due('every January', '2024-01-15'), '2025-01-15');
});

t.test('when done counts from today; other dates keep their distance; no dates stays dateless', async (t) => {
  t.equal(due('every day when done', '2024-01-01', '2024-06-10'), '2024-06-11');
  t.equal(due('every week on Monday when done', '2024-01-01', '2024-06-12'), '2024-06-17');
  const r = parseRecurrence('every week')!;
  t.same(nextOccurrence(r, { due: '2024-06-14', scheduled: '2024-06-12', start: '2024-06-10' }, '2024-06-20'), {
    due: '2024-06-21',
    scheduled: '2024-06-19',
    start: '2024-06-17',
  });
  t.same(
    nextOccurrence(r, { due: null, scheduled: '2024-06-12', start: '2024-06-10' }, '2024-06-20'),
    { due: null, scheduled: '2024-06-19', start: '2024-06-17' },
    'scheduled is the reference without a due date',
  );
  t.same(
    nextOccurrence(r, { due: '2024-06-14', scheduled: '2024-06-12', start: null }, '2024-06-20', true),
    { due: '2024-06-21', scheduled: null, start: null },
    'remove-scheduled option',
  );
  t.same(nextOccurrence(r, { due: null, scheduled: null, start: null }, '2024-06-20'), {
    due: null,
    scheduled: null,
    start: null,
  });
});

t.test('the next occurrence line keeps the description and drops what belongs to the completed task', async (t) => {
  const line =
    '  > - [ ] Water plants #home 🔼 🔁 every week 🛫 2024-06-10 ⏳ 2024-06-12 📅 2024-06-14 ➕ 2024-06-01 🆔 abc ⛔ xyz ✅ 2024-06-14 ^blk';
  const [, head, , close, rest] = TASK_LINE.exec(line)!;
  const f = readFields(rest);
  t.match(f, {
    recurrence: 'every week',
    due: '2024-06-14',
    scheduled: '2024-06-12',
    start: '2024-06-10',
    deleteOnCompletion: false,
  });
  const next = nextOccurrence(parseRecurrence(f.recurrence!)!, f, '2024-06-14')!;
  t.equal(
    nextOccurrenceLine(head, close, rest, next, null),
    '  > - [ ] Water plants #home 🔼 🔁 every week 🛫 2024-06-17 ⏳ 2024-06-19 📅 2024-06-21',
  );
  t.equal(
    nextOccurrenceLine(head, close, rest, { ...next, scheduled: null }, '2024-06-14'),
    '  > - [ ] Water plants #home 🔼 🔁 every week 🛫 2024-06-17 📅 2024-06-21 ➕ 2024-06-14',
  );
  t.equal(readFields(' Tidy 🔁 every day 🏁 delete 📅 2024-01-01').deleteOnCompletion, true);
  t.equal(readFields(' Plain task').recurrence, null);
});

t.test('replays the chains the Tasks plugin itself wrote in the demo vault', async (t) => {
  const file = readFileSync(
    path.join(corpus('obsidian-tasks-demo'), 'Manual Testing/Recurrence handling invalid dates.md'),
    'utf8',
  ).split('\n');
  let checked = 0;
  for (let i = 0; i + 1 < file.length; i++) {
    const [a, b] = [TASK_LINE.exec(file[i]), TASK_LINE.exec(file[i + 1])];
    if (!a || !b || b[2] !== 'x') continue;
    const [newer, older] = [readFields(a[4]), readFields(b[4])];
    if (older.recurrence === null || older.recurrence !== newer.recurrence) continue;
    t.equal(
      nextOccurrence(parseRecurrence(older.recurrence)!, older, '2022-10-03')!.due,
      newer.due,
      `${older.recurrence}: ${older.due} → ${newer.due}`,
    );
    checked++;
  }
  t.ok(checked >= 20, `${checked} recorded steps replayed`);
});
