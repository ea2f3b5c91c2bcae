// Large derived data as JSON in pieces: a fingerprint or a row batch over tens of thousands of entries is
// produced a slice at a time, so whoever consumes it (the index's memo, a contributor's insert loop) can
// let the event loop turn between slices. Pure; never does I/O.

/** Entries per piece: a few milliseconds of JSON even on a loaded machine. */
export const JSON_PIECE_ENTRIES = 1_000;

/**
 * `head`, then `list` in slices, each as JSON text. The concatenation is unambiguous for one contributor
 * (every piece is a complete JSON value), so hashing the pieces in order fingerprints head and list.
 */
export function* jsonPieces(head: unknown, list: readonly unknown[], size = JSON_PIECE_ENTRIES): Generator<string> {
  yield JSON.stringify(head);
  for (let i = 0; i < list.length; i += size) yield JSON.stringify(list.slice(i, i + size));
}

/** `list` mapped by `row` in slices of `size` rows (the last may be shorter): one insert statement each. */
export function* rowSlices<T, R>(list: readonly T[], row: (item: T) => R, size = JSON_PIECE_ENTRIES): Generator<R[]> {
  for (let i = 0; i < list.length; i += size) yield list.slice(i, i + size).map(row);
}
