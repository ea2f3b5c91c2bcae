// Group commit: requests of one origin share a batch, and a batch waits (bounded) for the write calls
// still in flight, but never when the caller is the only writer.
import t from 'tap';
import { WriteThroughQueue, type WriteRequest } from '../../../src/host/index/write-through.js';

/** A gauge of write calls in flight, driven by the test. */
function gauge(initial: number) {
  let n = initial;
  const listeners = new Set<() => void>();
  return {
    inFlight: () => n,
    subscribe(l: () => void) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    leave() {
      n--;
      for (const l of listeners) l();
    },
  };
}

function queue(maxWaitMs: number, writers?: ReturnType<typeof gauge>) {
  const batches: string[][] = [];
  let chain = Promise.resolve();
  const lock = (fn: () => Promise<void>) => (chain = chain.then(fn));
  const q = new WriteThroughQueue(
    lock,
    { maxPaths: () => 50, maxWaitMs: () => maxWaitMs, writers },
    async (group: readonly WriteRequest[]) => {
      batches.push(group.flatMap((r) => [...r.paths]));
    },
  );
  return { q, batches };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('a lone writer commits at once, however long the wait may be', async (t) => {
  const { q, batches } = queue(5_000, gauge(1));
  const t0 = performance.now();
  await q.submit({ paths: ['a.md'] });
  t.ok(performance.now() - t0 < 1_000, 'did not wait for the bound');
  t.same(batches, [['a.md']]);
});

t.test('the batch waits for the writers in flight to submit, then commits them together', async (t) => {
  const writers = gauge(3);
  const { q, batches } = queue(5_000, writers);
  const t0 = performance.now();
  const first = q.submit({ paths: ['a.md'] });
  await sleep(20);
  t.same(batches, [], 'nothing committed while two writers have not submitted');
  const second = q.submit({ paths: ['b.md'] });
  const third = q.submit({ paths: ['c.md'] });
  await Promise.all([first, second, third]);
  t.same(batches, [['a.md', 'b.md', 'c.md']], 'one transaction for the three');
  t.ok(performance.now() - t0 < 1_000, 'ended as soon as all had submitted');
});

t.test('a writer that ends without submitting (dry run, refusal) releases the wait', async (t) => {
  const writers = gauge(2);
  const { q, batches } = queue(5_000, writers);
  const t0 = performance.now();
  const first = q.submit({ paths: ['a.md'] });
  await sleep(20);
  writers.leave();
  await first;
  t.same(batches, [['a.md']]);
  t.ok(performance.now() - t0 < 1_000);
});

t.test('the wait is bounded when a writer in flight never submits', async (t) => {
  const { q, batches } = queue(60, gauge(4));
  const t0 = performance.now();
  await q.submit({ paths: ['a.md'] });
  const waited = performance.now() - t0;
  t.ok(waited >= 50 && waited < 2_000, `waited ${waited.toFixed(0)} ms for a 60 ms bound`);
  t.same(batches, [['a.md']]);
});

t.test('waiting 0 ms never gathers, and origins never share a batch', async (t) => {
  const { q, batches } = queue(0, gauge(8));
  const a = { kind: 'api_key' as const, id: 'k1', name: 'one' };
  const b = { kind: 'api_key' as const, id: 'k2', name: 'two' };
  await Promise.all([
    q.submit({ paths: ['a.md'], origin: a }),
    q.submit({ paths: ['b.md'], origin: b }),
    q.submit({ paths: ['c.md'], origin: a }),
  ]);
  t.same(batches, [['a.md', 'c.md'], ['b.md']]);
});
