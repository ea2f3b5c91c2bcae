// Bounded concurrency for async work over a list: the one helper the host and every family use, so
// "at most N reads in flight" means the same everywhere. Pure; no I/O of its own.

export interface MapLimitOptions {
  /** Stop starting new items once this aborts (items in flight finish); their results stay unset. */
  readonly signal?: AbortSignal;
  /** Called after each item finishes, with how many have and how many there are (for progress). */
  readonly onDone?: (done: number, total: number) => void;
}

/** Run `fn` over `items` with at most `limit` calls in flight; results keep the items' order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
  options: MapLimitOptions = {},
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let done = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length && !options.signal?.aborted) {
      const i = next++;
      out[i] = await fn(items[i]);
      options.onDone?.(++done, items.length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, lane));
  return out;
}
