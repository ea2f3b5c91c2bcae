// A tool call's deadline (src/host/families/call-deadline.ts): the refusal at the deadline, a client's
// cancellation seen whether it comes before or after the host starts listening for it, the handler's signal
// aborted with the call, and no listener left on the client's signal by a call that ended.
import t from 'tap';
import { getEventListeners } from 'node:events';
import { CallDeadline, LISTEN_AFTER_MS } from '../../../src/host/families/call-deadline.js';

// The deadline's timer is unref'd (a server has other handles); here nothing else keeps the process alive.
const keepAlive = setInterval(() => undefined, 1_000);
t.teardown(() => clearInterval(keepAlive));

const never = () => new Promise<never>(() => undefined);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const refusalOf = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: { code?: string; message?: string }) => e,
  );

t.test('call-deadline.timeout: the call is refused as timeout at the deadline, its signal aborted', async (t) => {
  const deadline = new CallDeadline(120, undefined);
  const signal = deadline.signal;
  const started = performance.now();
  const refusal = await refusalOf(deadline.race(never()));
  const took = performance.now() - started;
  t.equal(refusal?.code, 'timeout');
  t.ok(took >= 110 && took < 2_000, `at the deadline (${took.toFixed(0)} ms)`);
  t.ok(signal.aborted, "the handler's signal is aborted");
  t.equal((signal.reason as Error).name, 'TimeoutError');
  deadline.end();
});

t.test('call-deadline.early-cancel: a cancellation before the host listens is seen when it does', async (t) => {
  const client = new AbortController();
  const deadline = new CallDeadline(30_000, client.signal);
  const started = performance.now();
  const refused = refusalOf(deadline.race(never()));
  setTimeout(() => client.abort(), 2);
  const refusal = await refused;
  const took = performance.now() - started;
  t.equal(refusal?.code, 'timeout');
  t.match(refusal?.message, /cancelled by the client/);
  t.ok(took < LISTEN_AFTER_MS + 1_000, `soon, not at the deadline (${took.toFixed(0)} ms)`);
  deadline.end();
  t.equal(getEventListeners(client.signal, 'abort').length, 0, 'no listener left');
});

t.test('call-deadline.late-cancel: a long call listens to its client, and stops listening when it ends', async (t) => {
  const client = new AbortController();
  const deadline = new CallDeadline(30_000, client.signal);
  const refused = refusalOf(deadline.race(never()));
  const handlerSignal = deadline.signal;
  await sleep(LISTEN_AFTER_MS + 40);
  t.equal(getEventListeners(client.signal, 'abort').length, 1, 'listening once the call has run a while');
  const started = performance.now();
  client.abort(new Error('stop'));
  const refusal = await refused;
  t.ok(performance.now() - started < 50, 'the cancellation ends the call at once');
  t.match(refusal?.message, /cancelled by the client/);
  t.ok(handlerSignal.aborted, "the handler's signal follows");
  deadline.end();

  const other = new AbortController();
  const long = new CallDeadline(30_000, other.signal);
  await sleep(LISTEN_AFTER_MS + 40);
  long.end();
  t.equal(getEventListeners(other.signal, 'abort').length, 0, 'an ended call leaves no listener');
});

t.test('call-deadline.quick: a call that ends at once never touches the client signal', async (t) => {
  const client = new AbortController();
  const deadline = new CallDeadline(30_000, client.signal);
  t.equal(getEventListeners(client.signal, 'abort').length, 0, 'not listening while the call is young');
  t.equal(await deadline.race(Promise.resolve('done')), 'done');
  deadline.end();
  await sleep(LISTEN_AFTER_MS + 40);
  t.equal(getEventListeners(client.signal, 'abort').length, 0, 'no listener was attached');
  client.abort();
  t.notOk(deadline.signal.aborted, 'a cancellation after the end changes nothing');
});

t.test('call-deadline.already: a call whose client cancelled before it began is refused at once', async (t) => {
  const client = new AbortController();
  client.abort();
  const deadline = new CallDeadline(30_000, client.signal);
  const refusal = await refusalOf(deadline.race(never()));
  t.match(refusal?.message, /cancelled by the client/);
  deadline.end();
});
