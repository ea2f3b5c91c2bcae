// Byte I/O on descriptors the native core opened: Node's fd-based fs calls (read, write, fsync, fstat,
// close), so nothing here ever resolves a path. Writes and fsync wait on the disk and run in libuv's thread
// pool; reads do too unless the bytes are already in the page cache (the native preadNowait, RWF_NOWAIT),
// which is the usual case for a note just listed, read or written. fstat and close of an open descriptor
// only touch the kernel's in-memory inode (files are fsynced before they are closed), so they run on the
// calling thread: a thread-pool round trip costs more than the call (bench/writes: 246 -> 266 writes/s with
// 8 writers).

import fs from 'node:fs';
import { promisify } from 'node:util';
import { loadNative } from './native.js';

const read = promisify(fs.read);
const write = promisify(fs.write);
export const fsyncFd = promisify(fs.fsync);
export const fstatFd = async (fd: number): Promise<fs.Stats> => fs.fstatSync(fd);

export async function closeFd(fd: number): Promise<void> {
  try {
    fs.closeSync(fd);
  } catch {
    /* closing is best-effort */
  }
}

const nowait = loadNative()?.preadNowait;

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
    const want = buf.length - len;
    const cached = nowait ? nowait(fd, buf, len, want, len) : -1;
    if (cached >= 0) {
      // Inline reads may stop short where the cached part ends, so only an empty read is the end.
      if (cached === 0) break;
      len += cached;
      continue;
    }
    const { bytesRead } = await read(fd, buf, len, want, len);
    if (bytesRead === 0) break;
    len += bytesRead;
    // A regular file reads short from the pool only at its end: no second call just to be told so.
    if (bytesRead < want) break;
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
