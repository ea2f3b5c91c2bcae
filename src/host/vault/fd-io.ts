// Byte I/O on descriptors the native core opened: Node's fd-based fs calls (read, write, fsync, fstat,
// close), promisified, so nothing here ever resolves a path.

import fs from 'node:fs';
import { promisify } from 'node:util';

const read = promisify(fs.read);
const write = promisify(fs.write);
export const fsyncFd = promisify(fs.fsync);
export const fstatFd = promisify(fs.fstat);
const closeCb = promisify(fs.close);

export async function closeFd(fd: number): Promise<void> {
  try {
    await closeCb(fd);
  } catch {
    /* closing is best-effort */
  }
}

/** Read the whole file from offset 0; `limit` caps what is read (returns at most limit+1 bytes). */
export async function readAll(fd: number, sizeHint: number, limit = Number.MAX_SAFE_INTEGER): Promise<Buffer> {
  const cap = Math.min(limit + 1, Number.MAX_SAFE_INTEGER);
  let buf = Buffer.allocUnsafe(Math.max(1, Math.min(sizeHint + 1, cap)));
  let len = 0;
  for (;;) {
    if (len === buf.length) {
      if (len >= cap) break;
      const next = Buffer.allocUnsafe(Math.min(buf.length * 2, cap));
      buf.copy(next, 0, 0, len);
      buf = next;
    }
    const { bytesRead } = await read(fd, buf, len, buf.length - len, len);
    if (bytesRead === 0) break;
    len += bytesRead;
  }
  return buf.subarray(0, len);
}

export async function writeAll(fd: number, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.byteLength) {
    const { bytesWritten } = await write(fd, bytes, off, bytes.byteLength - off, off);
    off += bytesWritten;
  }
}
