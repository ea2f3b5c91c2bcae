// What each contributor last derived per note, as its fingerprint: lets the index skip a contributor's
// write when an edit changed nothing it derives from (an appended sentence leaves links and tasks alone).
// In memory only (a restart writes everything once again); a fingerprint is remembered only after commit.
import { createHash } from 'node:crypto';
import { setImmediate as yieldLoop } from 'node:timers/promises';
import type { NoteModel } from '../../markdown/index.js';
import type { IndexedNote } from '../../sdk/types.js';
import { contributorKey, type ContributorEntry } from './types.js';

/** Characters of fingerprint hashed between two turns of the event loop (a few ms). */
const HASH_SLICE_CHARS = 1 << 20;

export class DerivedMemo {
  /** contributor key@version → note id → fingerprint digest */
  private readonly known = new Map<string, Map<number, string>>();
  private staged: Array<[string, number, string]> = [];

  private static key(entry: ContributorEntry): string {
    return `${contributorKey(entry)}@${entry.contributor.version}`;
  }

  /** True when the contributor already derived exactly this (its write can be skipped); stages the new fingerprint otherwise. */
  async unchanged(entry: ContributorEntry, note: IndexedNote, model: NoteModel): Promise<boolean> {
    const fp = entry.contributor.fingerprint?.(note, model);
    if (fp === undefined) return false;
    const key = DerivedMemo.key(entry);
    const hash = createHash('sha1');
    if (typeof fp === 'string') hash.update(fp);
    else {
      let since = 0;
      for (const piece of fp) {
        hash.update(piece);
        since += piece.length;
        if (since < HASH_SLICE_CHARS) continue;
        since = 0;
        await yieldLoop();
      }
    }
    const digest = hash.digest('base64');
    if (this.known.get(key)?.get(note.id) === digest) return true;
    this.staged.push([key, note.id, digest]);
    return false;
  }

  /** Forget a note everywhere (removed, quarantined, renamed): its next write is a full one. */
  forget(noteId: number): void {
    for (const m of this.known.values()) m.delete(noteId);
  }

  /** Forget everything (the serving contributors changed: rows may be re-derived behind our back). */
  clear(): void {
    this.known.clear();
    this.staged = [];
  }

  /** The transaction committed: remember what it derived. */
  commit(): void {
    for (const [key, id, digest] of this.staged) {
      let m = this.known.get(key);
      if (!m) this.known.set(key, (m = new Map()));
      m.set(id, digest);
    }
    this.staged = [];
  }

  /** The transaction rolled back: remember nothing from it. */
  discard(): void {
    this.staged = [];
  }
}
