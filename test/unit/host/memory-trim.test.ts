// The host's memory trim: malloc_trim soon after start and then every tenth check, one at a time, none after
// stop; the heap collected once per quiet spell (retried a few times when it did not shrink), never while
// the event loop is busy.
import v8 from 'node:v8';
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

/** A trim whose checks are driven by hand: `busy` says what the loop did since the previous check. */
function driven(reduceHeap: () => boolean) {
  let busy = false;
  const trim = new MemoryTrim(log, { reduceHeap, checkMs: 10, utilization: () => (busy ? 0.5 : 0) });
  return {
    trim,
    /** Let `n` checks pass with the loop busy or quiet. */
    async checks(n: number, loop: 'busy' | 'quiet') {
      busy = loop === 'busy';
      await sleep(10 * n + 5);
    },
  };
}

t.test('the heap is collected after a quiet spell, once, and again only after work', async (t) => {
  let collected = 0;
  const d = driven(() => (collected++, true));
  t.teardown(() => d.trim.stop());
  d.trim.start();
  await d.checks(QUIET_CHECKS + 3, 'quiet');
  t.equal(collected, 1, 'collected once the loop was quiet');
  await d.checks(QUIET_CHECKS + 3, 'quiet');
  t.equal(collected, 1, 'not again while nothing happened');
  await d.checks(3, 'busy');
  t.equal(collected, 1, 'not while busy');
  await d.checks(QUIET_CHECKS + 3, 'quiet');
  t.equal(collected, 2, 'collected again after work and a new quiet spell');
});

t.test('never while the loop stays busy', async (t) => {
  let collected = 0;
  const d = driven(() => (collected++, true));
  t.teardown(() => d.trim.stop());
  d.trim.start();
  await d.checks(QUIET_CHECKS * 3, 'busy');
  t.equal(collected, 0);
});

t.test('a collection that did not shrink the heap is tried a few times, then waits for work', async (t) => {
  let collected = 0;
  const d = driven(() => (collected++, false));
  t.teardown(() => d.trim.stop());
  d.trim.start();
  await d.checks(QUIET_CHECKS * 3 + 2, 'quiet');
  t.equal(collected, 3, 'each after another quiet spell');
  await d.checks(QUIET_CHECKS * 2, 'quiet');
  t.equal(collected, 3, 'then no more until work');
});

t.test('the default measures the event loop: a spinning loop is busy, a sleeping one quiet', async (t) => {
  let collected = 0;
  const trim = new MemoryTrim(log, { reduceHeap: () => (collected++, true), checkMs: 100 });
  t.teardown(() => trim.stop());
  trim.start();
  const end = performance.now() + 100 * (QUIET_CHECKS + 3);
  while (performance.now() < end) {
    spin(90);
    await sleep(1);
  }
  t.equal(collected, 0, 'none while spinning');
  await sleep(100 * (QUIET_CHECKS + 4));
  t.equal(collected, 1, 'one once asleep');
});

t.test('the real collection runs on this runtime and says whether the young generation shrank', async (t) => {
  const reduce = heapReducer();
  t.type(reduce, 'function', 'V8 offers a full collection');
  // ~60 MiB of objects that live long enough to reach the old generation, then dropped: a full collection
  // frees them (on Node 20, gc() given any options left the old generation as it was).
  const used = () => v8.getHeapStatistics().used_heap_size / 1048576;
  let held: Array<{ i: number; s: string }> | null = [];
  for (let i = 0; i < 1_000_000; i++) held.push({ i, s: `x${i}` });
  await sleep(50);
  const live = used();
  t.equal(held.length, 1_000_000, 'held until here'); // read after the wait, so V8 keeps them alive over it
  held = null;
  t.type(reduce?.(), 'boolean', 'says whether the young generation shrank');
  t.ok(used() < live - 40, `the dropped objects are collected: ${live.toFixed(0)} → ${used().toFixed(0)} MiB`);
  t.equal((globalThis as { gc?: unknown }).gc, undefined, 'gc is not left on the globals');
});

t.test('without the native call or a collector it does nothing', async (t) => {
  const trim = new MemoryTrim(log, {});
  trim.start();
  trim.stop();
  t.pass('no timer, no error');
});
