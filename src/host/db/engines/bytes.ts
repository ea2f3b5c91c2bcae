// Byte buffers and wire messages the PGlite engine's two sides share (pglite-threaded.ts on the main thread,
// pglite-thread.ts and its statement profile on PGlite's): a module of its own, so PGlite's thread loads neither
// pg-protocol nor the worker loader for them.

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

/** A simple-protocol Query message whose text is `begin` (how Kysely and node-postgres open a transaction). */
export function isBegin(message: Uint8Array): boolean {
  if (message[0] !== 0x51 /* Q */ || message.byteLength !== 11) return false;
  return (
    Buffer.from(message.buffer, message.byteOffset + 5, 5)
      .toString('latin1')
      .toLowerCase() === 'begin'
  );
}
