// The one "index is behind" signal every index-backed tool gives: counts that make sense while the first
// scan has not counted the vault yet (never "151 of 0"), and nothing once the index has caught up.
import t from 'tap';
import { indexLag, type IndexStatus } from '../../../src/sdk/index-service.js';

const status = (s: Partial<IndexStatus>): IndexStatus => ({
  scanned: 0,
  indexed: 0,
  quarantined: 0,
  pending: 0,
  backlog: {},
  ready: true,
  lastPassAt: null,
  lastChangeAt: null,
  failures: 0,
  ...s,
});

t.test('caught up: no lag', async (t) => {
  t.equal(indexLag(status({ scanned: 10, indexed: 10 })), undefined);
});

t.test('first scan that has not counted the vault yet: indexed so far, no invented total', async (t) => {
  const lag = indexLag(status({ ready: false, scanned: 0, indexed: 151, pending: 0 }))!;
  t.equal(lag.scanned, null);
  t.match(lag.notice, /151 notes indexed so far/);
  t.notMatch(lag.notice, /of 0/);
});

t.test('first scan ahead of the index: the gap is pending', async (t) => {
  const lag = indexLag(status({ ready: false, scanned: 2469, indexed: 250, pending: 50 }))!;
  t.equal(lag.pending, 2219);
  t.match(lag.notice, /250 of 2469 notes seen so far are indexed/);
});

t.test('after the first scan: only queued notes are pending', async (t) => {
  const lag = indexLag(status({ scanned: 100, indexed: 99, pending: 3 }))!;
  t.equal(lag.pending, 3);
  t.match(lag.notice, /3 changed notes waiting/);
});
