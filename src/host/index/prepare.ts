// Turns changed paths into prepared items: reads bytes through the VaultFs, hashes, screens bytes the
// index refuses (oversized, invalid UTF-8, binary), and parses the rest in the worker pool. Never writes.
import { isUtf8 } from 'node:buffer';
import { setImmediate as yieldLoop } from 'node:timers/promises';
import { parseNote, unpackModel, type NoteModel, type PackedModel } from '../../markdown/index.js';
import { isRefusal } from '../../sdk/refusals.js';
import type { VaultFs } from '../../sdk/vault.js';
import type { WorkerPool } from '../../sdk/types.js';

/** A path's state as read now, plus the hash the index held when the read began (for race checks). */
export type Prepared =
  | { readonly kind: 'gone'; readonly path: string; readonly baseHash: string | undefined }
  | {
      readonly kind: 'quarantine';
      readonly path: string;
      readonly reason: string;
      readonly hash: string | null;
      readonly size: number;
      readonly mtimeMs: number;
      readonly baseHash: string | undefined;
    }
  | {
      readonly kind: 'content';
      readonly path: string;
      readonly hash: string;
      readonly size: number;
      readonly mtimeMs: number;
      readonly baseHash: string | undefined;
      /** Absent when the bytes hash to what the index already holds (nothing to re-derive). */
      model?: NoteModel;
      bytes?: Buffer;
    };

type FileRead =
  | { kind: 'gone' }
  | { kind: 'too_large'; size: number; mtimeMs: number }
  | { kind: 'refused'; reason: string; size: number; mtimeMs: number }
  | { kind: 'bytes'; bytes: Buffer; size: number; mtimeMs: number; hash: string };

const GONE_CODES = new Set(['not_found', 'invalid_path', 'not_a_directory', 'is_directory', 'is_symlink']);

/** Read one note; a file that vanished, became a folder or a link reads as gone. */
export async function readNote(fs: VaultFs, path: string, maxBytes: number): Promise<FileRead> {
  try {
    const st = await fs.stat(path);
    if (st.kind !== 'file') return { kind: 'gone' };
    const mtimeMs = Math.floor(st.mtimeMs);
    if (st.size > maxBytes) return { kind: 'too_large', size: st.size, mtimeMs };
    const bytes = await fs.readBytes(path, { maxBytes });
    return { kind: 'bytes', bytes, size: bytes.length, mtimeMs, hash: fs.contentHash(bytes) };
  } catch (e) {
    if (isRefusal(e) && GONE_CODES.has(e.code)) return { kind: 'gone' };
    if (isRefusal(e) && e.code === 'hard_link')
      return { kind: 'refused', reason: `hard_link: ${e.message}`, size: -1, mtimeMs: Date.now() };
    if (isRefusal(e) && e.code === 'too_large')
      return { kind: 'too_large', size: Number(e.details.size ?? maxBytes + 1), mtimeMs: Date.now() };
    throw e;
  }
}

/** Why bytes cannot be indexed as a note, or undefined when they can. */
export function screenBytes(bytes: Uint8Array): string | undefined {
  if (!isUtf8(bytes)) return 'not_utf8: the note is not valid UTF-8';
  if (bytes.indexOf(0) !== -1) return 'binary: the note contains NUL bytes';
  return undefined;
}

export async function prepareOne(
  fs: VaultFs,
  path: string,
  maxBytes: number,
  baseHash: string | undefined,
  force: boolean,
): Promise<Prepared> {
  const read = await readNote(fs, path, maxBytes);
  if (read.kind === 'gone') return { kind: 'gone', path, baseHash };
  if (read.kind === 'too_large') {
    return {
      kind: 'quarantine',
      path,
      reason: `too_large: ${read.size} bytes, over index.maxNoteBytes (${maxBytes})`,
      hash: null,
      size: read.size,
      mtimeMs: read.mtimeMs,
      baseHash,
    };
  }
  if (read.kind === 'refused')
    return {
      kind: 'quarantine',
      path,
      reason: read.reason,
      hash: null,
      size: read.size,
      mtimeMs: read.mtimeMs,
      baseHash,
    };
  const refused = screenBytes(read.bytes);
  if (refused)
    return {
      kind: 'quarantine',
      path,
      reason: refused,
      hash: read.hash,
      size: read.size,
      mtimeMs: read.mtimeMs,
      baseHash,
    };
  const item: Prepared = { kind: 'content', path, hash: read.hash, size: read.size, mtimeMs: read.mtimeMs, baseHash };
  if (force || read.hash !== baseHash) item.bytes = read.bytes;
  return item;
}

/** A path that could not be read for an unexpected reason: quarantined, and retried on every pass. */
export function unreadable(path: string, baseHash: string | undefined, e: unknown): Prepared {
  const why = (e instanceof Error ? e.message : String(e))
    .replace(/(?:file:\/\/)?\/[^\s'",;)]+/g, '<path>')
    .slice(0, 300);
  return { kind: 'quarantine', path, reason: `unreadable: ${why}`, hash: null, size: -1, mtimeMs: -1, baseHash };
}

/**
 * Entries per JSON slice of a model's long lists coming back from the pool: a note of 50,000 tasks is
 * rebuilt here 2,000 tasks per turn of the event loop (a few ms each), never in one pause.
 */
export const MODEL_SLICE = 2_000;

/** Parse every item that carries bytes: in the pool, `taskSize` notes per task; bytes are dropped after. */
export async function parseItems(workers: WorkerPool, items: Prepared[], taskSize: number): Promise<void> {
  const todo = items.filter(
    (i): i is Extract<Prepared, { kind: 'content' }> => i.kind === 'content' && i.bytes !== undefined,
  );
  const tasks: Promise<void>[] = [];
  for (let i = 0; i < todo.length; i += taskSize) {
    const group = todo.slice(i, i + taskSize);
    tasks.push(
      workers
        .run<PackedModel[]>(
          'parse-notes',
          group.map((g) => ({ path: g.path, bytes: g.bytes, packLists: MODEL_SLICE })),
          { lane: 'bulk' },
        )
        .then(async (packed) => {
          for (const [k, g] of group.entries()) {
            g.model = await unpackModel(packed[k], yieldLoop);
            g.bytes = undefined;
          }
        }),
    );
  }
  await Promise.all(tasks);
}

/** Parse on this thread (write-through of a small note: no pool round trip). */
export function parseInline(item: Prepared): void {
  if (item.kind !== 'content' || item.bytes === undefined) return;
  item.model = parseNote(item.bytes, { path: item.path });
  item.bytes = undefined;
}
