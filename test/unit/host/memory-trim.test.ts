// The host's memory trim: malloc_trim soon after start and then every tenth check, one at a time, none after
// stop; the heap collected once per quiet spell (retried a few times when it did not shrink), never while
// the event loop is busy.
import t from 'tap';
import { heapReducer, MemoryTrim, QUIET_CHECKS } from '../../../src/host/memory-trim.js';
import type { Logger } from '../../../src/sdk/types.js';

const log = { debug: () => undefined } as unknown as Logger;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Keeps the event loop busy for ms (the trim reads the loop's utilization). */
function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

t.test('trims once start-up is over, never two at once, and not after stop', async (t) => {
  let calls = 0;
  let release: (v: boolean) => void = () => undefined;
  const trim = new MemoryTrim(log, {
    trim: () => {
      calls++;
      return new Promise<boolean>((r) => (release = r));
    },
    checkMs: 100,
  });
  trim.start();
  trim.start(); // a second start changes nothing
  t.equal(calls, 0, 'nothing at once');
  await sleep(150);
  t.equal(calls, 1, 'the first trim at the first check');
  await sleep(1_100);
  t.equal(calls, 1, 'the next one waits for the running one');
  trim.stop();
  release(true);
  await sleep(250);
  t.equal(calls, 1, 'none after stop');
});

t.test('the heap is collected after a quiet spell, once, and again only after work', async (t) => {
  const collected: number[] = [];
  let checks = 0;
  const trim = new MemoryTrim(log, {
    reduceHeap: () => {
      collected.push(checks);
      return true;
    },
    checkMs: 50,
  });
  const timer = setInterval(() => checks++, 50);
  t.teardown(() => {
    clearInterval(timer);
    trim.stop();
  });
  trim.start();
  await sleep(50 * (QUIET_CHECKS + 4));
  t.equal(collected.length, 1, 'collected once the loop was quiet');
  await sleep(50 * (QUIET_CHECKS + 2));
  t.equal(collected.length, 1, 'not again while nothing happened');
  // Work: a check that finds the loop busy most of its period.
  for (let i = 0; i < 3; i++) {
    spin(45);
    await sleep(5);
  }
  await sleep(50 * (QUIET_CHECKS + 4));
  t.equal(collected.length, 2, 'collected again after work and a new quiet spell');
});

t.test('never while the loop stays busy', async (t) => {
  let collected = 0;
  const trim = new MemoryTrim(log, { reduceHeap: () => (collected++, true), checkMs: 50 });
  t.teardown(() => trim.stop());
  trim.start();
  const end = performance.now() + 50 * (QUIET_CHECKS + 4);
  while (performance.now() < end) {
    spin(40);
    await sleep(2);
  }
  t.equal(collected, 0);
});

t.test('a collection that did not shrink the heap is tried a few times, then waits for work', async (t) => {
  let collected = 0;
  const trim = new MemoryTrim(log, { reduceHeap: () => (collected++, false), checkMs: 30 });
  t.teardown(() => trim.stop());
  trim.start();
  await sleep(30 * (QUIET_CHECKS + 12));
  t.equal(collected, 3);
});

t.test('the real collection runs on this runtime and says whether the young generation shrank', async (t) => {
  const reduce = heapReducer();
  t.type(reduce, 'function', 'V8 offers a full collection');
  t.type(reduce?.(), 'boolean');
  t.equal((globalThis as { gc?: unknown }).gc, undefined, 'gc is not left on the globals');
});

t.test('without the native call or a collector it does nothing', async (t) => {
  const trim = new MemoryTrim(log, {});
  trim.start();
  trim.stop();
  t.pass('no timer, no error');
});
