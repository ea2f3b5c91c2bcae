// The index's database writes: one call applies a batch of decided operations inside the caller's
// transaction — notes rows, quarantine rows and every contributor's write/remove/rename. Never reads files.
import { sql, type Transaction } from 'kysely';
import type { NoteModel } from '../../markdown/index.js';
import { bigintArray } from '../../sdk/query/sql-params.js';
import type { ChangeOrigin, ContributorItem, IndexedNote, RemovedNote, RemoveReason } from '../../sdk/types.js';
import type { DerivedMemo } from './memo.js';
import type { CachedNote, ContributorEntry } from './types.js';

export interface NoteFacts {
  readonly path: string;
  readonly hash: string;
  readonly size: number;
  readonly mtimeMs: number;
}

export type Op =
  | ({ readonly op: 'upsert'; readonly model: NoteModel; readonly prev?: CachedNote } & NoteFacts)
  | ({
      readonly op: 'rename';
      readonly from: string;
      readonly model: NoteModel;
      readonly prev: CachedNote;
      readonly replaces?: CachedNote;
    } & NoteFacts)
  | {
      readonly op: 'touch';
      readonly path: string;
      readonly size: number;
      readonly mtimeMs: number;
      readonly prev: CachedNote;
    }
  | { readonly op: 'remove'; readonly path: string; readonly prev: CachedNote }
  | {
      readonly op: 'quarantine';
      readonly path: string;
      readonly reason: string;
      readonly hash: string | null;
      readonly size: number;
      readonly mtimeMs: number;
      readonly prev?: CachedNote;
    }
  | { readonly op: 'unquarantine'; readonly path: string };

export interface ApplyResult {
  /** Note ids by path for upserted and renamed notes. */
  readonly ids: Map<string, number>;
  /** With `defer`: the writes still to make, in contributor order. */
  readonly deferred: DeferredWrite[];
}

/** Forget the deferred marks of these notes (their deferred rows are written). */
export async function clearDeferred(trx: Transaction<any>, noteIds: readonly number[]): Promise<void> {
  if (noteIds.length > 0)
    await sql`DELETE FROM index_deferred WHERE note_id = ANY(${`{${noteIds.join(',')}}`}::bigint[])`.execute(trx);
}

/** Tag identities in first-seen order (the `notes.tags` column; `tags @> '["x"]'` finds a tag). */
export function tagIdentities(model: NoteModel): string[] {
  return [...new Set(model.tags.map((t) => t.tag))];
}

export function problemsOf(model: NoteModel): string[] {
  const out = [...model.problems];
  const fe = model.frontmatter.error;
  if (fe) out.push(`frontmatter ${fe.code}: ${fe.message}`);
  return out;
}

function noteColumns(model: NoteModel) {
  return {
    title: model.title,
    aliases: JSON.stringify(model.aliases),
    tags: JSON.stringify(tagIdentities(model)),
    frontmatter: model.frontmatter.data ? JSON.stringify(model.frontmatter.data) : null,
    frontmatter_text: model.frontmatter.present ? model.frontmatter.text : null,
    word_count: model.wordCount,
    problems: JSON.stringify(problemsOf(model)),
  };
}

async function removeNote(
  trx: Transaction<any>,
  vaultId: number,
  contributors: readonly ContributorEntry[],
  path: string,
  prev: CachedNote,
  reason: RemoveReason,
  origin?: ChangeOrigin,
  memo?: DerivedMemo,
): Promise<void> {
  memo?.forget(prev.id);
  for (const c of contributors)
    await c.contributor.remove(trx, { id: prev.id, vaultId, path, reason, ...(origin ? { origin } : {}) });
  await trx.deleteFrom('notes').where('id', '=', prev.id).execute();
}

/**
 * The notes whose files went, together: each contributor's `removeMany` where it has one (`remove` for each in
 * turn where not), then their `notes` rows in one statement. A folder of many notes deleted costs each
 * contributor a few statements instead of a few per note.
 */
async function removeDeleted(
  trx: Transaction<any>,
  vaultId: number,
  contributors: readonly ContributorEntry[],
  gone: ReadonlyArray<{ path: string; prev: CachedNote }>,
  origin?: ChangeOrigin,
  memo?: DerivedMemo,
): Promise<void> {
  if (gone.length === 0) return;
  const notes: RemovedNote[] = gone.map((g) => ({
    id: g.prev.id,
    vaultId,
    path: g.path,
    reason: 'removed',
    ...(origin ? { origin } : {}),
  }));
  for (const n of notes) memo?.forget(n.id);
  for (const c of contributors) {
    if (c.contributor.removeMany) await c.contributor.removeMany(trx, notes);
    else for (const n of notes) await c.contributor.remove(trx, n);
  }
  await sql`DELETE FROM notes WHERE id = ANY(${bigintArray(notes.map((n) => n.id))})`.execute(trx);
}

export interface ApplyOptions {
  readonly origin?: ChangeOrigin;
  /** Which paths may have a quarantine row to clear (default: any). */
  readonly quarantined?: (path: string) => boolean;
  /** Skips contributor writes that would derive what they derived before. */
  readonly memo?: DerivedMemo;
  /**
   * The upserted notes whose `deferred` contributors' writes are left out (returned instead, for a later
   * transaction), with the notes marked in index_deferred: every note of a write-through, and in a pass
   * the notes whose deferred rows are still waiting. Every contributor writes the other notes here, and
   * their marks are cleared (a pass re-derives what a lost second transaction left).
   */
  readonly defer?: (path: string) => boolean;
}

/** A deferred contributor's writes left for the transaction after the batch's. */
export interface DeferredWrite {
  readonly entry: ContributorEntry;
  readonly items: ReadonlyArray<ContributorItem<NoteModel>>;
}

/** Apply `ops` inside `trx`. Throws whatever the database or a contributor throws (the caller isolates). */
export async function applyOps(
  trx: Transaction<any>,
  vaultId: number,
  ops: readonly Op[],
  contributors: readonly ContributorEntry[],
  now: Date,
  options: ApplyOptions = {},
): Promise<ApplyResult> {
  const { origin, memo } = options;
  const quarantined = options.quarantined ?? (() => true);
  const ids = new Map<string, number>();
  const deferred: DeferredWrite[] = [];
  const clear: string[] = [];
  const indexed = (id: number, f: NoteFacts): IndexedNote => ({
    id,
    vaultId,
    path: f.path,
    contentHash: f.hash,
    size: f.size,
    mtimeMs: f.mtimeMs,
    ...(origin ? { origin } : {}),
  });

  const gone = ops.filter((o): o is Extract<Op, { op: 'remove' }> => o.op === 'remove');
  await removeDeleted(trx, vaultId, contributors, gone, origin, memo);
  for (const o of gone) clear.push(o.path);
  for (const o of ops) {
    if (o.op === 'quarantine') {
      if (o.prev) await removeNote(trx, vaultId, contributors, o.path, o.prev, 'quarantined', undefined, memo);
      await trx
        .insertInto('quarantine')
        .values({
          vault_id: vaultId,
          path: o.path,
          reason: o.reason,
          content_hash: o.hash,
          size: o.size,
          mtime: new Date(o.mtimeMs),
          since: now,
        })
        .onConflict((oc) =>
          oc
            .columns(['vault_id', 'path'])
            .doUpdateSet({ reason: o.reason, content_hash: o.hash, size: o.size, mtime: new Date(o.mtimeMs) }),
        )
        .execute();
    } else if (o.op === 'unquarantine') {
      clear.push(o.path);
    } else if (o.op === 'touch') {
      await trx
        .updateTable('notes')
        .set({ size: o.size, mtime: new Date(o.mtimeMs) })
        .where('id', '=', o.prev.id)
        .execute();
    }
  }

  for (const o of ops) {
    if (o.op !== 'rename') continue;
    if (o.replaces) await removeNote(trx, vaultId, contributors, o.path, o.replaces, 'replaced', origin, memo);
    memo?.forget(o.prev.id);
    await trx
      .updateTable('notes')
      .set({
        path: o.path,
        ...noteColumns(o.model),
        content_changed_at: sql`CASE WHEN content_hash = ${o.hash} THEN content_changed_at ELSE ${now} END`,
        content_hash: o.hash,
        size: o.size,
        mtime: new Date(o.mtimeMs),
        indexed_at: now,
      })
      .where('id', '=', o.prev.id)
      .execute();
    ids.set(o.path, o.prev.id);
    clear.push(o.path);
    const note = indexed(o.prev.id, o);
    const edited = o.prev.hash !== o.hash;
    for (const c of contributors) {
      if (c.contributor.rename) {
        await c.contributor.rename(trx, note, o.from, o.model);
        // Moved and edited in one pass: the contributor re-derives from the new content too.
        if (edited) await c.contributor.write(trx, note, o.model);
      } else {
        await c.contributor.remove(trx, {
          id: o.prev.id,
          vaultId,
          path: o.from,
          reason: 'renamed',
          ...(origin ? { origin } : {}),
        });
        await c.contributor.write(trx, note, o.model);
      }
    }
  }

  const upserts = ops.filter((o): o is Extract<Op, { op: 'upsert' }> => o.op === 'upsert');
  if (upserts.length > 0) {
    const rows = upserts.map((u) => ({
      vault_id: vaultId,
      path: u.path,
      ...noteColumns(u.model),
      content_hash: u.hash,
      size: u.size,
      mtime: new Date(u.mtimeMs),
      content_changed_at: now,
      indexed_at: now,
    }));
    const returned = await trx
      .insertInto('notes')
      .values(rows)
      .onConflict((oc) =>
        oc.columns(['vault_id', 'path']).doUpdateSet({
          title: sql`excluded.title`,
          aliases: sql`excluded.aliases`,
          tags: sql`excluded.tags`,
          frontmatter: sql`excluded.frontmatter`,
          frontmatter_text: sql`excluded.frontmatter_text`,
          word_count: sql`excluded.word_count`,
          problems: sql`excluded.problems`,
          size: sql`excluded.size`,
          mtime: sql`excluded.mtime`,
          indexed_at: sql`excluded.indexed_at`,
          content_changed_at: sql`CASE WHEN notes.content_hash = excluded.content_hash THEN notes.content_changed_at ELSE excluded.content_changed_at END`,
          content_hash: sql`excluded.content_hash`,
        }),
      )
      .returning(['id', 'path'])
      .execute();
    for (const r of returned) ids.set(r.path as string, Number(r.id));
    const items = upserts.map((u) => {
      const id = ids.get(u.path);
      if (id === undefined) throw new Error('notes upsert returned no id');
      clear.push(u.path);
      return { note: indexed(id, u), model: u.model };
    });
    const later = options.defer;
    for (const c of contributors) {
      const k = c.contributor;
      let todo = items;
      if (memo) {
        todo = [];
        for (const it of items) if (!(await memo.unchanged(c, it.note, it.model))) todo.push(it);
      }
      if (todo.length === 0) continue;
      if (later && k.deferred) {
        const left = todo.filter((it) => later(it.note.path));
        if (left.length > 0) deferred.push({ entry: c, items: left });
        if (left.length === todo.length) continue;
        todo = todo.filter((it) => !later(it.note.path));
      }
      if (k.writeMany) await k.writeMany(trx, todo);
      else for (const it of todo) await k.write(trx, it.note, it.model);
    }
    if (deferred.length > 0) {
      const marked = [...new Set(deferred.flatMap((d) => d.items.map((it) => it.note.id)))];
      await sql`INSERT INTO index_deferred (note_id, vault_id) SELECT unnest(${`{${marked.join(',')}}`}::bigint[]), ${vaultId}
        ON CONFLICT (note_id) DO NOTHING`.execute(trx);
    }
    // Notes whose every row is written here lose their marks; a deferred note keeps its mark until its rows are.
    const direct = later ? items.filter((it) => !later(it.note.path)) : items;
    if (direct.length > 0)
      await clearDeferred(
        trx,
        direct.map((it) => it.note.id),
      );
  }

  const cleared = clear.filter(quarantined);
  if (cleared.length > 0)
    await trx.deleteFrom('quarantine').where('vault_id', '=', vaultId).where('path', 'in', cleared).execute();
  return { ids, deferred };
}
