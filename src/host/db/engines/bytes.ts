// Byte buffers the PGlite engine's two sides share (pglite-threaded.ts on the main thread, pglite-thread.ts on
// PGlite's): a module of its own, so PGlite's thread loads neither pg-protocol nor the worker loader for it.

/** The parts one after another in one new buffer that owns its memory whole (so it can be transferred). */
export function concat(parts: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const p of parts) size += p.byteLength;
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
