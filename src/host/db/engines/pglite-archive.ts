// A PGlite data directory as one gzip'd tar file (POSIX ustar, directories and regular files only), so an
// initialised directory can ship inside the package: npm drops empty folders, and PostgreSQL needs its
// empty ones (pg_notify, pg_logical/snapshots…). Both ends are here, so the format is exactly what the
// writer emits; the reader refuses anything else (links, paths leaving the folder, bad checksums) and
// gunzip checks the whole file's CRC. Both run before a database opens (the build; a first start), never while serving.
import {
  closeSync,
  createReadStream,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip, gzipSync } from 'node:zlib';

const BLOCK = 512;
const FILE = '0';
const DIRECTORY = '5';

/** The ustar header of one entry (names ≤ 100 bytes: a data directory's are short). */
function header(name: string, type: string, size: number): Buffer {
  const h = Buffer.alloc(BLOCK);
  if (Buffer.byteLength(name) > 100) throw new Error(`archive entry name over 100 bytes: ${name}`);
  h.write(name, 0, 'utf8');
  h.write(type === DIRECTORY ? '0000755\0' : '0000644\0', 100, 'latin1');
  h.write('0000000\0', 108, 'latin1');
  h.write('0000000\0', 116, 'latin1');
  h.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 'latin1');
  h.write('00000000000\0', 136, 'latin1');
  h.write(type, 156, 'latin1');
  h.write('ustar\0' + '00', 257, 'latin1');
  h.fill(' ', 148, 156);
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return h;
}

/** Write `dir` (its folders, empty ones included, and files; entries sorted) as a gzip'd tar to `file`. */
export function packDirectory(dir: string, file: string, skip: (relative: string) => boolean = () => false): void {
  const parts: Buffer[] = [];
  const walk = (relative: string) => {
    for (const name of readdirSync(path.join(dir, relative)).sort()) {
      const entry = relative ? `${relative}/${name}` : name;
      if (skip(entry)) continue;
      const stat = statSync(path.join(dir, entry));
      if (stat.isDirectory()) {
        parts.push(header(`${entry}/`, DIRECTORY, 0));
        walk(entry);
      } else if (stat.isFile()) {
        const data = readFileSync(path.join(dir, entry));
        parts.push(
          header(entry, FILE, data.byteLength),
          data,
          Buffer.alloc((BLOCK - (data.byteLength % BLOCK)) % BLOCK),
        );
      } else throw new Error(`not a file or folder: ${entry}`);
    }
  };
  walk('');
  parts.push(Buffer.alloc(2 * BLOCK));
  writeFileSync(file, gzipSync(Buffer.concat(parts), { level: 9 }));
}

const field = (h: Buffer, at: number, length: number) => h.toString('utf8', at, at + length).replace(/\0.*$/s, '');

/** One header's entry, checked: a folder or a file of `size` bytes at a path inside the archive's folder. */
function entryOf(h: Buffer): { relative: string; directory: boolean; size: number } {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i];
  if (Number.parseInt(field(h, 148, 8).trim(), 8) !== sum) throw new Error('archive header checksum mismatch');
  const prefix = field(h, 345, 155);
  const name = (prefix ? `${prefix}/` : '') + field(h, 0, 100);
  const relative = name.replace(/\/$/, '');
  if (!relative || path.isAbsolute(relative) || relative.split('/').some((s) => s === '..' || s === '' || s === '.'))
    throw new Error(`archive entry outside its folder: ${JSON.stringify(name)}`);
  const type = String.fromCharCode(h[156]);
  if (type !== DIRECTORY && type !== FILE && type !== '\0')
    throw new Error(`archive entry of type ${JSON.stringify(type)}: ${relative}`);
  const size = Number.parseInt(field(h, 124, 12).trim() || '0', 8);
  if (!Number.isSafeInteger(size) || size < 0) throw new Error(`archive entry size: ${relative}`);
  return { relative, directory: type === DIRECTORY, size };
}

/**
 * Unpack an archive written by packDirectory into `into` (created); throws on anything it did not write,
 * a truncated file or a bad gzip checksum. Streamed: it holds a chunk at a time, never the whole tar
 * (~40 MiB), which would stay resident until a garbage collection and raise the first start's peak.
 */
export async function unpackArchive(file: string, into: string): Promise<void> {
  mkdirSync(into, { recursive: true });
  let header = Buffer.alloc(0);
  let open: { fd: number; left: number } | undefined;
  let skip = 0;
  let ended = false;
  const consume = (chunk: Buffer) => {
    for (let at = 0; at < chunk.byteLength; ) {
      if (open) {
        const n = Math.min(open.left, chunk.byteLength - at);
        writeSync(open.fd, chunk, at, n);
        at += n;
        open.left -= n;
        if (open.left === 0) {
          closeSync(open.fd);
          open = undefined;
        }
      } else if (skip > 0 || ended) {
        const n = ended ? chunk.byteLength - at : Math.min(skip, chunk.byteLength - at);
        at += n;
        skip -= ended ? 0 : n;
      } else {
        const take = chunk.subarray(at, at + BLOCK - header.byteLength);
        header = Buffer.concat([header, take]);
        at += take.byteLength;
        if (header.byteLength < BLOCK) continue;
        const h = header;
        header = Buffer.alloc(0);
        if (h.every((b) => b === 0)) {
          ended = true;
          continue;
        }
        const entry = entryOf(h);
        const target = path.join(into, entry.relative);
        if (entry.directory) {
          mkdirSync(target, { recursive: true });
          continue;
        }
        mkdirSync(path.dirname(target), { recursive: true });
        skip = (BLOCK - (entry.size % BLOCK)) % BLOCK;
        const fd = openSync(target, 'w');
        if (entry.size === 0) closeSync(fd);
        else open = { fd, left: entry.size };
      }
    }
  };
  // pipeline reports a consumer's throw as an abort: keep the reader's own reason.
  let refused: unknown;
  try {
    await pipeline(createReadStream(file), createGunzip(), async (source: AsyncIterable<Buffer>) => {
      try {
        for await (const chunk of source) consume(chunk);
      } catch (e) {
        refused = e;
        throw e;
      }
    });
  } catch (e) {
    throw refused ?? e;
  } finally {
    if (open) closeSync(open.fd);
  }
  if (!ended || open) throw new Error('archive truncated');
}
