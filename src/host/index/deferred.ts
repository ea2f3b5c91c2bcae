// Deferred contributors' rows of write-throughs that have answered, waiting for the index's second
// transaction. They wait up to index.deferredDelayMs so that a note written again meanwhile is derived
// once: per contributor and note only the newest model is kept. Readers of these rows await
// IndexService.settled(), which writes them at once; the notes stay marked in index_deferred until then.
import type { NoteModel } from '../../markdown/index.js';
import type { ContributorItem } from '../../sdk/types.js';
import type { DeferredWrite } from './store.js';
import { contributorKey, type ContributorEntry } from './types.js';

export class DeferredRows {
  /** Contributor key → its latest entry and the items waiting, by note id. */
  private readonly waiting = new Map<
    string,
    { entry: ContributorEntry; byNote: Map<number, ContributorItem<NoteModel>> }
  >();
  /** Path → id of each note waiting (a rename writes the waiting rows first, so paths hold still). */
  private readonly paths = new Map<string, number>();

  /** Distinct notes waiting. */
  get size(): number {
    return this.paths.size;
  }

  /** Whether rows of the note at `path` are waiting. */
  has(path: string): boolean {
    return this.paths.has(path);
  }

  /** Queue the deferred writes of one commit; a note already waiting takes the newer model. */
  add(work: readonly DeferredWrite[]): void {
    for (const { entry, items } of work) {
      const key = contributorKey(entry);
      const byNote = this.waiting.get(key)?.byNote ?? new Map<number, ContributorItem<NoteModel>>();
      this.waiting.set(key, { entry, byNote });
      for (const item of items) {
        // Delete first so the note moves to the end: writes keep the order the notes were last written in.
        byNote.delete(item.note.id);
        byNote.set(item.note.id, item);
        this.paths.set(item.note.path, item.note.id);
      }
    }
  }

  /**
   * Everything waiting, and empty the queue. `current(item)` says whether the note still is what the item
   * was derived for (same id at the same path); items of notes removed or quarantined since are dropped.
   */
  take(current: (item: ContributorItem<NoteModel>) => boolean): DeferredWrite[] {
    const out: DeferredWrite[] = [];
    for (const { entry, byNote } of this.waiting.values()) {
      const items = [...byNote.values()].filter(current);
      if (items.length > 0) out.push({ entry, items });
    }
    this.waiting.clear();
    this.paths.clear();
    return out;
  }
}
