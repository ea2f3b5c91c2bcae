// Filesystem events for the index: subscribes to the vault root with @parcel/watcher, skips dot-paths,
// converts to vault-relative POSIX paths and hands them over debounced. Never reads file contents.
import path from 'node:path';
import parcelWatcher from '@parcel/watcher';
import { DOT_SEGMENT } from './types.js';

export interface WatchBatch {
  /** Vault-relative paths of notes (`.md`) that were created, changed or deleted. */
  readonly notes: Set<string>;
  /** Other paths deleted (maybe folders: notes below them are gone too). */
  readonly deleted: Set<string>;
  /** Other paths created (maybe folders moved in: notes below them are new). */
  readonly created: Set<string>;
}

export interface VaultWatcherOptions {
  readonly root: string;
  readonly debounceMs: number;
  /** Longest a burst of events may postpone delivery. */
  readonly maxDelayMs: number;
  readonly onBatch: (batch: WatchBatch) => void;
  readonly onError: (err: Error) => void;
}

/**
 * What the watcher never watches: a path with a segment that starts with a dot (`.obsidian`, `.git`, `.trash`
 * and whatever is inside them), matched on the path relative to the root. One expression without flags, which
 * @parcel/watcher runs as a substring search: subscribing crawls the whole vault and matches every entry, and
 * the two globs it used to get (a dot entry anywhere, and everything below one), which it turns into regular
 * expressions full of lookaheads, made that crawl several times as long (~10k notes: 240-390 ms against 47-64 ms),
 * and the first index waits for it.
 */
export const WATCH_IGNORE: readonly RegExp[] = [DOT_SEGMENT];

export class VaultWatcher {
  private sub: parcelWatcher.AsyncSubscription | undefined;
  private timer: NodeJS.Timeout | undefined;
  private firstAt = 0;
  private batch: WatchBatch = emptyBatch();
  private closed = false;

  constructor(private readonly options: VaultWatcherOptions) {}

  async start(): Promise<void> {
    this.sub = await parcelWatcher.subscribe(
      this.options.root,
      (err, events) => {
        if (this.closed) return;
        if (err) {
          this.options.onError(err);
          return;
        }
        for (const e of events) this.add(e.type, e.path);
      },
      { ignore: [...WATCH_IGNORE] },
    );
  }

  private add(type: 'create' | 'update' | 'delete', abs: string): void {
    const rel = path.relative(this.options.root, abs);
    if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) return;
    const p = rel.split(path.sep).join('/');
    if (DOT_SEGMENT.test(p)) return;
    if (p.endsWith('.md')) this.batch.notes.add(p);
    else if (type === 'delete') this.batch.deleted.add(p);
    else if (type === 'create') this.batch.created.add(p);
    else return;
    const now = Date.now();
    if (!this.timer) this.firstAt = now;
    clearTimeout(this.timer);
    const wait = Math.max(0, Math.min(this.options.debounceMs, this.firstAt + this.options.maxDelayMs - now));
    this.timer = setTimeout(() => this.flush(), wait);
    this.timer.unref();
  }

  private flush(): void {
    this.timer = undefined;
    const batch = this.batch;
    this.batch = emptyBatch();
    if (!this.closed) this.options.onBatch(batch);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    const sub = this.sub;
    this.sub = undefined;
    if (sub) await sub.unsubscribe().catch(() => undefined);
  }
}

/** Whether `p` lies below one of `folders` (vault-relative paths). */
export function underAny(p: string, folders: ReadonlySet<string>): boolean {
  for (let i = p.indexOf('/'); i !== -1; i = p.indexOf('/', i + 1)) if (folders.has(p.slice(0, i))) return true;
  return false;
}

function emptyBatch(): WatchBatch {
  return { notes: new Set(), deleted: new Set(), created: new Set() };
}
