// The change-feed contributor: turns the pipeline's write/rename/remove calls into created/modified/
// moved/deleted events, attributed when the pipeline says who wrote, and prunes by age and count.
// Runs inside the pipeline's transaction only; a re-derive with an unchanged hash records nothing.
import { sql } from 'kysely';
import type {
  ContributorItem,
  DatabaseTransaction,
  IndexContributor,
  IndexedNote,
  RemoveReason,
} from '../../src/sdk/index.js';
import type { ChangeFeedSettings } from '../../src/generated/change-feed/settings.js';
import { bigintArray } from '../../src/sdk/index.js';

/** The `changeFeed` settings section, generated from its schema in family.ts (npm run gen). */
export type FeedSettings = ChangeFeedSettings;

/**
 * Optional extras a pipeline may attach to the note it passes (not in the contract yet): who made the
 * change through our tools, and why a note was removed.
 */
interface Origin {
  kind: 'api_key' | 'oauth' | 'operator' | 'test';
  id: string;
  name?: string;
}
type WithExtras = { origin?: Origin; reason?: RemoveReason };

interface EventIn {
  kind: string;
  path: string;
  from?: string | null;
  reason?: string | null;
  hash?: string | null;
  origin?: Origin;
}

/** change_feed_state rows for notes whose path and hash the feed now knows. */
function stateRows(notes: readonly IndexedNote[]): string {
  return JSON.stringify(notes.map((n) => ({ note_id: n.id, path: n.path, content_hash: n.contentHash })));
}

async function record(
  trx: DatabaseTransaction,
  vaultId: number,
  events: readonly EventIn[],
  settings: () => FeedSettings,
  known: readonly IndexedNote[] = [],
): Promise<void> {
  if (events.length === 0) return;
  const rows = events.map((e) => ({
    kind: e.kind,
    path: e.path,
    from_path: e.from ?? null,
    reason: e.reason ?? null,
    content_hash: e.hash ?? null,
    actor_kind: e.origin ? e.origin.kind : 'human',
    actor_id: e.origin?.id ?? null,
    actor_name: e.origin?.name ?? null,
  }));
  // One statement: the events (WITH ORDINALITY keeps the batch's order in the sequence numbers), the
  // state rows of the notes they describe, and the count towards the next prune.
  const { rows: meta } = await sql<{ since_prune: number }>`
    WITH added AS (
      INSERT INTO change_events (vault_id, kind, path, from_path, reason, content_hash, actor_kind, actor_id, actor_name)
      SELECT ${vaultId}, r.kind, r.path, r.from_path, r.reason, r.content_hash, r.actor_kind, r.actor_id, r.actor_name
      FROM jsonb_array_elements(${JSON.stringify(rows)}::jsonb) WITH ORDINALITY AS e(j, n),
        jsonb_to_record(e.j) AS r(kind text, path text, from_path text, reason text, content_hash text, actor_kind text, actor_id text, actor_name text)
      ORDER BY e.n
      RETURNING 1
    ), saved AS (
      INSERT INTO change_feed_state (note_id, vault_id, path, content_hash)
      SELECT r.note_id, ${vaultId}, r.path, r.content_hash FROM jsonb_to_recordset(${stateRows(known)}::jsonb) AS r(note_id bigint, path text, content_hash text)
      ON CONFLICT (note_id) DO UPDATE SET path = EXCLUDED.path, content_hash = EXCLUDED.content_hash
      RETURNING 1
    )
    INSERT INTO change_feed_meta (vault_id, since_prune) VALUES (${vaultId}, ${events.length})
    ON CONFLICT (vault_id) DO UPDATE SET since_prune = change_feed_meta.since_prune + ${events.length} RETURNING since_prune`.execute(
    trx,
  );
  const s = settings();
  if ((meta[0]?.since_prune ?? 0) >= s.pruneEvery) await prune(trx, vaultId, s);
}

/** Drop events older than the retention age or beyond the retained count; remember how far history goes. */
export async function prune(trx: DatabaseTransaction, vaultId: number, s: FeedSettings): Promise<number> {
  const { rows } = await sql<{ n: string; top: string | null }>`
    WITH bound AS (
      SELECT greatest(
        coalesce((SELECT max(seq) FROM change_events WHERE vault_id = ${vaultId} AND at < now() - make_interval(days => ${s.retentionDays})), 0),
        coalesce((SELECT seq FROM change_events WHERE vault_id = ${vaultId} ORDER BY seq DESC OFFSET ${s.maxEvents} LIMIT 1), 0)) AS b
    ), gone AS (
      DELETE FROM change_events WHERE vault_id = ${vaultId} AND seq <= (SELECT b FROM bound) RETURNING seq
    )
    SELECT count(*) AS n, max(seq) AS top FROM gone`.execute(trx);
  const top = rows[0]?.top;
  await sql`UPDATE change_feed_meta SET since_prune = 0, pruned_through = greatest(pruned_through, ${top === null || top === undefined ? 0 : Number(top)})
    WHERE vault_id = ${vaultId}`.execute(trx);
  return Number(rows[0]?.n ?? 0);
}

/** What the contributor knows of the index outside a tool call (absent when no index service runs). */
export type IndexReadiness = (vaultId: number) => { ready: boolean; resumed?: boolean } | undefined;

/**
 * A note the feed has never seen: `created`, unless the index is being built from empty (its initial scan
 * with no feed state). Then first sightings are recorded silently until the index reports ready, and when
 * the feed had history (a rebuild), one `reset` event stands for all of them.
 */
async function firstSighting(
  trx: DatabaseTransaction,
  note: IndexedNote,
  readiness: IndexReadiness,
): Promise<'created' | 'silent'> {
  const status = readiness(note.vaultId);
  const ready = status?.ready ?? true;
  const meta = (
    await sql<{ building: boolean }>`SELECT building FROM change_feed_meta WHERE vault_id = ${note.vaultId}`.execute(
      trx,
    )
  ).rows[0];
  if (ready) {
    if (meta?.building)
      await sql`UPDATE change_feed_meta SET building = false WHERE vault_id = ${note.vaultId}`.execute(trx);
    return 'created';
  }
  if (meta?.building) return 'silent';
  // A process that took the vault over from another catches up after a first build another owner
  // finished (or never needed): what it first sees now is new.
  if (status?.resumed) return 'created';
  const { rows } = await sql<{
    seen: boolean;
  }>`SELECT EXISTS (SELECT 1 FROM change_feed_state WHERE vault_id = ${note.vaultId}) AS seen`.execute(trx);
  if (rows[0]?.seen) return 'created'; // a catch-up scan after a restart: this note really is new
  // A first build has no history to reset (no cursor can predate it); a rebuild tells readers to resync.
  if (meta)
    await sql`INSERT INTO change_events (vault_id, kind, path) VALUES (${note.vaultId}, 'reset', '')`.execute(trx);
  await sql`INSERT INTO change_feed_meta (vault_id, building) VALUES (${note.vaultId}, true)
    ON CONFLICT (vault_id) DO UPDATE SET building = true`.execute(trx);
  return 'silent';
}

export function feedContributor(
  settings: () => FeedSettings,
  readiness: IndexReadiness = () => undefined,
): IndexContributor<unknown> {
  // Per vault, this pass: events itemised so far, and changes beyond maxEventsPerPass left to one `gap` row.
  const itemised = new Map<number, number>();
  const skipped = new Map<number, number>();
  /**
   * Record these events, itemising up to maxEventsPerPass per pass and counting the rest for one `gap`,
   * and save the state of the notes they describe (in the same statement when any event is kept).
   */
  const emit = async (
    trx: DatabaseTransaction,
    vaultId: number,
    events: readonly EventIn[],
    known: readonly IndexedNote[] = [],
  ): Promise<void> => {
    const kept: EventIn[] = [];
    for (const e of events) {
      const n = itemised.get(vaultId) ?? 0;
      // Changes made through our tools are always itemised: their callers rely on seeing them.
      if (!e.origin && n >= settings().maxEventsPerPass) {
        skipped.set(vaultId, (skipped.get(vaultId) ?? 0) + 1);
        continue;
      }
      itemised.set(vaultId, n + 1);
      kept.push(e);
    }
    if (kept.length > 0) await record(trx, vaultId, kept, settings, known);
    else await save(trx, known);
  };
  const states = async (trx: DatabaseTransaction, ids: readonly number[]) => {
    const { rows } = await sql<{ note_id: string; path: string; content_hash: string }>`
      SELECT note_id, path, content_hash FROM change_feed_state WHERE note_id = ANY(${`{${ids.join(',')}}`}::bigint[])`.execute(
      trx,
    );
    return new Map(rows.map((r) => [Number(r.note_id), { path: r.path, content_hash: r.content_hash }]));
  };
  const state = async (trx: DatabaseTransaction, id: number) => (await states(trx, [id])).get(id);
  const save = async (trx: DatabaseTransaction, notes: readonly IndexedNote[]) => {
    if (notes.length === 0) return;
    await sql`
      INSERT INTO change_feed_state (note_id, vault_id, path, content_hash)
      SELECT r.note_id, ${notes[0].vaultId}, r.path, r.content_hash FROM jsonb_to_recordset(${stateRows(notes)}::jsonb) AS r(note_id bigint, path text, content_hash text)
      ON CONFLICT (note_id) DO UPDATE SET path = EXCLUDED.path, content_hash = EXCLUDED.content_hash`.execute(trx);
  };
  const writeMany = async (trx: DatabaseTransaction, items: ReadonlyArray<ContributorItem<unknown>>): Promise<void> => {
    if (items.length === 0) return;
    const vaultId = items[0].note.vaultId;
    const before = await states(
      trx,
      items.map((i) => i.note.id),
    );
    const events: EventIn[] = [];
    const changed: IndexedNote[] = [];
    // Whether first sightings are `created` or silent is one answer for the whole batch (see firstSighting).
    let sighting: 'created' | 'silent' | undefined;
    for (const { note } of items) {
      const origin = (note as IndexedNote & WithExtras).origin;
      const was = before.get(note.id);
      if (!was) {
        if (!origin) sighting ??= await firstSighting(trx, note, readiness);
        if (origin || sighting === 'created')
          events.push({ kind: 'created', path: note.path, hash: note.contentHash, origin });
      } else {
        if (was.path === note.path && was.content_hash === note.contentHash) continue; // a re-derive: nothing changed
        if (was.path !== note.path)
          events.push({ kind: 'moved', path: note.path, from: was.path, hash: note.contentHash, origin });
        if (was.content_hash !== note.contentHash)
          events.push({ kind: 'modified', path: note.path, hash: note.contentHash, origin });
      }
      changed.push(note);
    }
    await emit(trx, vaultId, events, changed);
  };
  return {
    name: 'change-feed',
    version: 1,
    write: (trx, note, model) => writeMany(trx, [{ note, model }]),
    writeMany,
    async rename(trx, note, fromPath) {
      const origin = (note as IndexedNote & WithExtras).origin;
      const before = await state(trx, note.id);
      const events: EventIn[] = [
        { kind: 'moved', path: note.path, from: before?.path ?? fromPath, hash: note.contentHash, origin },
      ];
      if (before && before.content_hash !== note.contentHash)
        events.push({ kind: 'modified', path: note.path, hash: note.contentHash, origin });
      await emit(trx, note.vaultId, events, [note]);
    },
    async remove(trx, note) {
      const extra = note as typeof note & WithExtras;
      await emit(trx, note.vaultId, [
        { kind: 'deleted', path: note.path, reason: extra.reason ?? 'removed', origin: extra.origin },
      ]);
      await sql`DELETE FROM change_feed_state WHERE note_id = ${note.id}`.execute(trx);
    },
    async removeMany(trx, notes) {
      const events = notes.map((note): EventIn => {
        const extra = note as typeof note & WithExtras;
        return { kind: 'deleted', path: note.path, reason: extra.reason ?? 'removed', origin: extra.origin };
      });
      await emit(trx, notes[0].vaultId, events);
      await sql`DELETE FROM change_feed_state WHERE note_id = ANY(${bigintArray(notes.map((n) => n.id))})`.execute(trx);
    },
    async passEnd(_db, { vaultId, caughtUp, transaction }) {
      const count = skipped.get(vaultId) ?? 0;
      itemised.delete(vaultId);
      skipped.delete(vaultId);
      if (!caughtUp && count === 0) return;
      await transaction(async (trx) => {
        // The build from empty is over once a whole pass has caught up: from then on (and after any
        // restart) a note never seen before is `created`, never a silent first sighting.
        if (caughtUp)
          await sql`UPDATE change_feed_meta SET building = false WHERE vault_id = ${vaultId} AND building`.execute(trx);
        if (count > 0)
          await sql`INSERT INTO change_events (vault_id, kind, path, count) VALUES (${vaultId}, 'gap', '', ${count})`.execute(
            trx,
          );
      });
    },
  };
}
