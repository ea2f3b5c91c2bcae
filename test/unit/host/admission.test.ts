// Admission: rate buckets, write bucket, concurrency slots with a bounded wait, daily quota.
import t from 'tap';
import { Admission, Slots } from '../../../src/host/admission/index.js';
import { isRefusal, type Refusal } from '../../../src/sdk/refusals.js';
import type { Principal } from '../../../src/sdk/types.js';

const who = (id: string): Principal => ({
  kind: 'test',
  id,
  name: id,
  user: id,
  vaultId: 1,
  scopes: ['read', 'readwrite'],
});
const codeOf = async (p: Promise<unknown>) => {
  try {
    await p;
    return 'admitted';
  } catch (e) {
    return isRefusal(e) ? (e as Refusal).code : String(e);
  }
};
const base = {
  callsPerMinute: 1000,
  writesPerMinute: 1000,
  concurrency: { read: 10, write: 10, expensive: 10 },
  queueTimeoutMs: 0,
  dailyQuota: 0,
};

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

const of = (id: string, user: string): Principal => ({
  kind: 'test',
  id,
  name: id,
  user,
  vaultId: 1,
  scopes: ['readwrite'],
});

t.test('per-user buckets count every credential of the user, and do not bleed into another user', async (t) => {
  const a = new Admission({
    ...base,
    perUser: {
      callsPerMinute: 3,
      writesPerMinute: 1,
      concurrency: { read: 0, write: 0, expensive: 0 },
      dailyQuota: 0,
      sessions: 0,
    },
  });
  (await a.admit(of('k1', 'alice'), 'read'))();
  (await a.admit(of('k2', 'alice'), 'read'))();
  (await a.admit(of('k3', 'alice'), 'write'))();
  t.equal(
    await codeOf(a.admit(of('k1', 'alice'), 'read')),
    'rate_limited',
    "the user's fourth call is refused, whichever key sends it",
  );
  t.equal(await codeOf(a.admit(of('k4', 'bob'), 'read')), 'admitted', 'another user has buckets of their own');
  t.equal(await codeOf(a.admit(of('k4', 'bob'), 'write')), 'admitted');
  t.equal(
    await codeOf(a.admit(of('k5', 'bob'), 'write')),
    'rate_limited',
    "bob's second write over two keys hits his write bucket",
  );
});

t.test("a user's own limits override the defaults, and 0 lifts one", async (t) => {
  const defaults = {
    callsPerMinute: 1,
    writesPerMinute: 0,
    concurrency: { read: 0, write: 0, expensive: 0 },
    dailyQuota: 0,
    sessions: 0,
  };
  const a = new Admission({ ...base, perUser: defaults });
  const own = new Map([['carol', { ...defaults, callsPerMinute: 0 }]]);
  a.limitsOf = (u) => own.get(u) ?? defaults;
  for (let i = 0; i < 5; i++) t.equal(await codeOf(a.admit(of('c', 'carol'), 'read')).then((r) => r), 'admitted');
  (await a.admit(of('d', 'dave'), 'read'))();
  t.equal(await codeOf(a.admit(of('d', 'dave'), 'read')), 'rate_limited', 'dave is on the default of 1 a minute');
});

t.test("per-user slots: one user's calls wait on their own slots, leaving the server's to others", async (t) => {
  const a = new Admission({
    ...base,
    concurrency: { read: 3, write: 3, expensive: 3 },
    queueTimeoutMs: 20,
    perUser: {
      callsPerMinute: 0,
      writesPerMinute: 0,
      concurrency: { read: 0, write: 0, expensive: 1 },
      dailyQuota: 0,
      sessions: 0,
    },
  });
  const held = await a.admit(of('e1', 'erin'), 'expensive');
  const refused = await a.admit(of('e2', 'erin'), 'expensive').catch((e: Refusal) => e);
  t.equal((refused as Refusal).code, 'busy');
  t.match((refused as Refusal).message, /of the user "erin"/, 'the refusal says whose slots are full');
  const frank = await a.admit(of('f1', 'frank'), 'expensive');
  t.same(a.stats().expensive, { busy: 2, limit: 3 }, "frank still gets one of the server's slots beside erin's");
  frank();
  held();
  t.equal(await codeOf(a.admit(of('e2', 'erin'), 'expensive')), 'admitted');
});

t.test('a per-user daily quota spans the keys of the user and releases the slots it took', async (t) => {
  const a = new Admission({
    ...base,
    perUser: {
      callsPerMinute: 0,
      writesPerMinute: 0,
      concurrency: { read: 2, write: 0, expensive: 0 },
      dailyQuota: 2,
      sessions: 0,
    },
  });
  (await a.admit(of('g1', 'gina'), 'read'))();
  (await a.admit(of('g2', 'gina'), 'read'))();
  t.equal(await codeOf(a.admit(of('g3', 'gina'), 'read')), 'quota_exceeded');
  t.same(a.stats().read, { busy: 0, limit: 10 });
  t.equal(
    await codeOf(a.admit(of('g3', 'gina'), 'read')),
    'quota_exceeded',
    'no slot of hers leaked: a leak would answer busy',
  );
});
