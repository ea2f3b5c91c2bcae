// The one Moment.js-style formatter the families share (periodic note names in notes, format() in bases).
import t from 'tap';
import { formatMoment } from '../../../src/sdk/index.js';

const utc = (iso: string, format: string) => formatMoment(new Date(iso), format, 'utc');

t.test('calendar tokens', async (t) => {
  t.equal(utc('2026-12-05T09:07:03Z', 'YYYY-MM-DD'), '2026-12-05');
  t.equal(utc('2026-12-05T09:07:03Z', 'YY M D MMM MMMM ddd dddd d Q'), '26 12 5 Dec December Sat Saturday 6 4');
  t.equal(utc('2026-02-01T00:00:00Z', 'DDDD DDD'), '032 32');
  t.equal(
    utc('2026-12-05T00:00:00Z', 'dddd, MMMM Do YYYY'),
    'Saturday, December 5th 2026',
    'Do is an ordinal, not D + o',
  );
  const ordinals = [1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 31].map((d) =>
    utc(`2026-01-${String(d).padStart(2, '0')}T00:00:00Z`, 'Do'),
  );
  t.same(ordinals, ['1st', '2nd', '3rd', '4th', '11th', '12th', '13th', '21st', '22nd', '23rd', '31st']);
});

t.test('ISO and locale weeks across a year end', async (t) => {
  t.equal(utc('2026-01-01T00:00:00Z', 'GGGG-[W]WW'), '2026-W01', 'a Thursday: ISO week 1');
  t.equal(utc('2027-01-01T00:00:00Z', 'GGGG-[W]WW'), '2026-W53', 'a Friday: the last ISO week of 2026');
  t.equal(utc('2024-12-30T00:00:00Z', 'GGGG-[W]W'), '2025-W1', 'a Monday in the week holding 2 January');
  t.equal(utc('2026-12-27T00:00:00Z', 'gggg-[W]ww'), '2027-W01', 'a Sunday whose week holds 1 January');
  t.equal(utc('2026-12-26T00:00:00Z', 'gggg-[W]w'), '2026-W52');
});

t.test('time of day, literals and other letters', async (t) => {
  t.equal(utc('2026-12-05T15:04:09Z', 'HH:mm:ss H h hh A a m s'), '15:04:09 15 3 03 PM pm 4 9');
  t.equal(utc('2026-12-05T00:30:00Z', 'h A'), '12 AM');
  t.equal(utc('2026-12-05T00:00:00Z', '[Week of] YYYY [YYYY] x'), 'Week of 2026 YYYY x');
});

t.test('local time reads the server zone, utc the UTC fields', async (t) => {
  const d = new Date(2026, 11, 31, 23, 30);
  t.equal(formatMoment(d, 'YYYY-MM-DD HH:mm'), '2026-12-31 23:30');
  t.equal(
    formatMoment(d, 'YYYY-MM-DD HH:mm', 'utc'),
    `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 16)}`,
  );
});
