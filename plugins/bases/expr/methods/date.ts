// Methods of dates (`date`, `time`, `format` with the Moment.js tokens users write most, `relative`). Pure: dates are
// UTC, "now" comes from the context.
import { formatMoment } from '../../../../src/sdk/index.js';
import { argValue, DAY, needString } from '../runtime.js';
import { BDate } from '../values.js';
import type { Method, MethodTable } from './types.js';

export const DATE_METHODS: MethodTable<BDate> = new Map<string, Method<BDate>>([
  ['date', (d) => new BDate(d.ms - (((d.ms % DAY) + DAY) % DAY), false)],
  [
    'time',
    (d) => {
      const x = new Date(d.ms);
      return [x.getUTCHours(), x.getUTCMinutes(), x.getUTCSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
    },
  ],
  [
    'format',
    (d, a, row, ctx, l) => formatMoment(new Date(d.ms), needString(argValue(a, 0, row, ctx, l), 'format()'), 'utc'),
  ],
  ['relative', (d, _a, _row, ctx) => relative(d.ms - ctx.nowMs)],
]);

function relative(deltaMs: number): string {
  const abs = Math.abs(deltaMs);
  const units: [string, number][] = [
    ['year', 365 * DAY],
    ['month', 30 * DAY],
    ['day', DAY],
    ['hour', 3_600_000],
    ['minute', 60_000],
  ];
  for (const [u, size] of units) {
    const n = Math.floor(abs / size);
    if (n >= 1) {
      const s = `${n} ${u}${n > 1 ? 's' : ''}`;
      return deltaMs < 0 ? `${s} ago` : `in ${s}`;
    }
  }
  return 'just now';
}
