// Admission: rate buckets, write bucket, concurrency slots with a bounded wait, daily quota.
import t from 'tap';
import { Admission, Slots } from '../../../src/host/admission/index.js';
import { isRefusal, type Refusal } from '../../../src/sdk/refusals.js';
import type { Principal } from '../../../src/sdk/types.js';

const who = (id: string): Principal => ({ kind: 'test', id, name: id, user: id, vaultId: 1, scopes: ['read', 'readwrite'] });
const codeOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return 'admitted';
  } catch (e) {
    return isRefusal(e) ? (e as Refusal).code : String(e);
  }
};
const base = { callsPerMinute: 1000, writesPerMinute: 1000, concurrency: { read: 10, write: 10, expensive: 10 }, queueTimeoutMs: 0, dailyQuota: 0 };

t.test('the general bucket refuses past its rate, per credential, and says when to retry', async (t) => {
  const a = new Admission({ ...base, callsPerMinute: 3 });
  for (let i = 0; i < 3; i++) (await a.admit(who('a'), 'read'))();
  try {
    await a.admit(who('a'), 'read');
    t.fail('should refuse');
  } catch (e) {
    t.equal((e as Refusal).code, 'rate_limited');
    t.ok(((e as Refusal).details.retryAfterMs as number) > 0);
    t.equal((e as Refusal).retryable, true);
  }
  t.equal(await codeOf(a.admit(who('b'), 'read')), 'admitted', 'another credential has its own bucket');
});

t.test('writes have their own bucket', async (t) => {
  const a = new Admission({ ...base, writesPerMinute: 1 });
  (await a.admit(who('w'), 'write'))();
  t.equal(await codeOf(a.admit(who('w'), 'write')), 'rate_limited');
  t.equal(await codeOf(a.admit(who('w'), 'read')), 'admitted');
});

t.test('concurrency slots: busy after the queue wait, and a release wakes a waiter', async (t) => {
  const a = new Admission({ ...base, concurrency: { read: 1, write: 1, expensive: 1 }, queueTimeoutMs: 50 });
  const release = await a.admit(who('c'), 'expensive');
  t.equal(await codeOf(a.admit(who('c'), 'expensive')), 'busy');
  const waiter = a.admit(who('c'), 'expensive');
  setTimeout(release, 10);
  t.equal(await codeOf(waiter), 'admitted');
  const slots = new Slots(2);
  t.ok(await slots.acquire(0));
  t.ok(await slots.acquire(0));
  t.notOk(await slots.acquire(0));
  slots.release();
  t.equal(slots.busy, 1);
});

t.test('the daily quota refuses with its reset time', async (t) => {
  const a = new Admission({ ...base, dailyQuota: 2 });
  (await a.admit(who('q'), 'read'))();
  (await a.admit(who('q'), 'read'))();
  t.equal(await codeOf(a.admit(who('q'), 'read')), 'quota_exceeded');
  t.same(a.stats().read, { busy: 0, limit: 10 }, 'a refused quota released its slot');
});
