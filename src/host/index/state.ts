// What the index holds for one vault, in memory (mirroring the notes and quarantine rows), and the
// commit of a prepared batch: decide, write in one transaction, isolate a failing note, mirror the result.
// The caller holds the writer lock; this module never reads files.
import type { Kysely } from 'kysely';
import type { ChangeOrigin } from '../../sdk/types.js';
import { FencedError } from '../cluster/fence.js';
import { DerivedMemo } from './memo.js';
import { decide } from './decide.js';
import type { Prepared } from './prepare.js';
import { applyOps, type ApplyResult, type DeferredWrite, type Op } from './store.js';
import { announceCommit, type CachedNote, type ContributorEntry, type QuarantinedNote } from './types.js';

export interface IndexCounters {
  /** Items finished (written, skipped or quarantined) since start. */
  processed: number;
  upserted: number;
  renamed: number;
  removed: number;
  quarantined: number;
  unchanged: number;
}

export interface IndexStateDeps {
  readonly db: Kysely<any>;
  readonly vaultId: number;
  readonly contributors: () => readonly ContributorEntry[];
  readonly now: () => Date;
  /** Report a failure (counted, logged, shown in status). */
  readonly fail: (what: string, err: unknown) => void;
  /** Queue a path to be read again. */
  readonly requeue: (path: string) => void;
  /** Runs first in each transaction (the vault lease's fence); its throw is never isolated per note. */
  readonly fence?: (trx: Kysely<any>) => Promise<void>;
}

/** The quarantine reason of a note the database or a family refused (its bytes were fine). */
export const INDEX_FAILED = 'index_failed';

export class IndexState {
  readonly cache = new Map<string, CachedNote>();
  readonly quarantine = new Map<string, QuarantinedNote>();
  readonly memo = new DerivedMemo();
  readonly counters: IndexCounters = {
    processed: 0,
    upserted: 0,
    renamed: 0,
    removed: 0,
    quarantined: 0,
    unchanged: 0,
  };
  lastChangeAt: string | null = null;

  constructor(private readonly deps: IndexStateDeps) {}

  async load(): Promise<void> {
    const { db, vaultId } = this.deps;
    const notes = await db
      .selectFrom('notes')
      .select(['id', 'path', 'content_hash', 'size', 'mtime'])
      .where('vault_id', '=', vaultId)
      .execute();
    for (const r of notes)
      this.cache.set(r.path, {
        id: Number(r.id),
        hash: r.content_hash,
        size: Number(r.size),
        mtimeMs: new Date(r.mtime).getTime(),
      });
    const quarantined = await db.selectFrom('quarantine').selectAll().where('vault_id', '=', vaultId).execute();
    for (const r of quarantined) {
      this.quarantine.set(r.path, {
        reason: r.reason,
        hash: r.content_hash ?? null,
        size: Number(r.size ?? -1),
        mtimeMs: r.mtime ? new Date(r.mtime).getTime() : -1,
      });
    }
  }

  /** Whether a file with these facts differs from what the index last saw at `path`. */
  differs(path: string, size: number, mtimeMs: number): boolean {
    const known = this.cache.get(path) ?? this.quarantine.get(path);
    return !known || known.size !== size || known.mtimeMs !== mtimeMs;
  }

  /**
   * Decide and write one batch (`moves`: destination → source of renames our own tools made). For the
   * notes `defer` names, the writes of deferred contributors are returned for a later transaction
   * instead of made here (see ApplyOptions.defer).
   */
  async commit(
    items: readonly Prepared[],
    moves?: ReadonlyMap<string, string>,
    origin?: ChangeOrigin,
    defer?: (path: string) => boolean,
  ): Promise<DeferredWrite[]> {
    const { ops, redo, unchanged } = decide(items, this.cache, this.quarantine, moves);
    for (const p of redo) this.deps.requeue(p);
    this.counters.unchanged += unchanged;
    this.counters.processed += items.length - redo.length;
    if (ops.length === 0) return [];
    const contributors = this.deps.contributors();
    const now = this.deps.now();
    try {
      const r = await this.write(ops, contributors, now, origin, defer);
      this.applied(ops, r.ids);
      return r.deferred;
    } catch (e) {
      // Fenced: another process owns the vault now; nothing of this batch may land, nor be quarantined.
      if (e instanceof FencedError) throw e;
      // Isolate the failing note(s): each operation alone; one that still fails is quarantined. Still
      // deferred: rows of these notes may be waiting, and must not land after these.
      const deferred: DeferredWrite[] = [];
      for (const op of ops) {
        try {
          const r = await this.write([op], contributors, now, origin, defer);
          this.applied([op], r.ids);
          deferred.push(...r.deferred);
        } catch (e) {
          if (e instanceof FencedError) throw e;
          this.deps.fail('index write failed', e);
          await this.quarantineAfterFailure(op, e, now);
        }
      }
      return deferred;
    }
  }

  private async write(
    ops: readonly Op[],
    contributors: readonly ContributorEntry[],
    now: Date,
    origin?: ChangeOrigin,
    defer?: (path: string) => boolean,
  ): Promise<ApplyResult> {
    try {
      const r = await this.deps.db.transaction().execute(async (trx) => {
        await this.deps.fence?.(trx);
        return applyOps(trx, this.deps.vaultId, ops, contributors, now, {
          origin,
          quarantined: (p) => this.quarantine.has(p),
          memo: this.memo,
          defer,
        });
      });
      this.memo.commit();
      announceCommit(contributors, this.deps.vaultId, this.deps.fail);
      return r;
    } catch (e) {
      this.memo.discard();
      throw e;
    }
  }

  private async quarantineAfterFailure(op: Op, err: unknown, now: Date): Promise<void> {
    if (op.op === 'unquarantine') return;
    const hash = op.op === 'upsert' || op.op === 'rename' || op.op === 'quarantine' ? op.hash : op.prev.hash;
    const size = 'size' in op ? op.size : -1;
    const mtimeMs = 'mtimeMs' in op ? op.mtimeMs : -1;
    const q: Op = {
      op: 'quarantine',
      path: op.path,
      reason: `${INDEX_FAILED}: ${brief(err)}`,
      hash,
      size,
      mtimeMs,
      prev: this.cache.get(op.path),
    };
    try {
      this.applied([q], (await this.write([q], this.deps.contributors(), now)).ids);
    } catch (e) {
      this.deps.fail('quarantine write failed', e);
    }
  }

  /** Mirror committed operations in memory. */
  private applied(ops: readonly Op[], ids: ReadonlyMap<string, number>): void {
    let changed = false;
    for (const o of ops) {
      if (o.op === 'upsert' || o.op === 'rename') {
        const id = ids.get(o.path);
        if (id !== undefined) this.cache.set(o.path, { id, hash: o.hash, size: o.size, mtimeMs: o.mtimeMs });
        this.quarantine.delete(o.path);
        if (o.op === 'rename') {
          this.cache.delete(o.from);
          this.counters.renamed++;
        } else this.counters.upserted++;
        changed = true;
      } else if (o.op === 'touch') {
        this.cache.set(o.path, { ...o.prev, size: o.size, mtimeMs: o.mtimeMs });
      } else if (o.op === 'remove') {
        this.cache.delete(o.path);
        this.quarantine.delete(o.path);
        this.counters.removed++;
        changed = true;
      } else if (o.op === 'quarantine') {
        this.cache.delete(o.path);
        this.quarantine.set(o.path, { reason: o.reason, hash: o.hash, size: o.size, mtimeMs: o.mtimeMs });
        this.counters.quarantined++;
        changed = true;
      } else this.quarantine.delete(o.path);
    }
    if (changed) this.lastChangeAt = this.deps.now().toISOString();
  }
}

/** A short, path-free description of an error for status and quarantine reasons. */
export function brief(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.replace(/(?:file:\/\/)?\/[^\s'",;)]+/g, '<path>').slice(0, 300);
}
