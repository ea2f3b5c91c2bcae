// Bounded concurrency for async work over a list: the one helper the host and every family use, so
// "at most N reads in flight" means the same everywhere. Pure; no I/O of its own.

/** Run `fn` over `items` with at most `limit` calls in flight; results keep the items' order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, lane));
  return out;
}
