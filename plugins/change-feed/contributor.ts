// The change-feed contributor: turns the pipeline's write/rename/remove calls into created/modified/
// moved/deleted events, attributed when the pipeline says who wrote, and prunes by age and count.
// Runs inside the pipeline's transaction only; a re-derive with an unchanged hash records nothing.
import { sql } from 'kysely';
import type { DatabaseTransaction, IndexContributor, IndexedNote, RemoveReason } from '../../src/sdk/types.js';

export interface FeedSettings { retentionDays: number; maxEvents: number; pruneEvery: number; pageCap: number; maxEventsPerPass: number }

/**
 * Optional extras a pipeline may attach to the note it passes (not in the contract yet): who made the
 * change through our tools, and why a note was removed.
 */
interface Origin { kind: 'api_key' | 'oauth' | 'operator' | 'test'; id: string; name?: string }
type WithExtras = { origin?: Origin; reason?: RemoveReason };

interface EventIn { kind: string; path: string; from?: string | null; reason?: string | null; hash?: string | null; origin?: Origin }

async function record(trx: DatabaseTransaction, vaultId: number, e: EventIn, settings: () => FeedSettings): Promise<void> {
  await sql`
    INSERT INTO change_events (vault_id, kind, path, from_path, reason, content_hash, actor_kind, actor_id, actor_name)
    VALUES (${vaultId}, ${e.kind}, ${e.path}, ${e.from ?? null}, ${e.reason ?? null}, ${e.hash ?? null},
      ${e.origin ? e.origin.kind : 'human'}, ${e.origin?.id ?? null}, ${e.origin?.name ?? null})`.execute(trx);
  const { rows } = await sql<{ since_prune: number }>`
    INSERT INTO change_feed_meta (vault_id, since_prune) VALUES (${vaultId}, 1)
    ON CONFLICT (vault_id) DO UPDATE SET since_prune = change_feed_meta.since_prune + 1 RETURNING since_prune`.execute(trx);
  const s = settings();
  if ((rows[0]?.since_prune ?? 0) >= s.pruneEvery) await prune(trx, vaultId, s);
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
export type IndexReadiness = (vaultId: number) => { ready: boolean } | undefined;

/**
 * A note the feed has never seen: `created`, unless the index is being built from empty (its initial scan
 * with no feed state). Then first sightings are recorded silently until the index reports ready, and when
 * the feed had history (a rebuild), one `reset` event stands for all of them.
 */
async function firstSighting(trx: DatabaseTransaction, note: IndexedNote, readiness: IndexReadiness): Promise<'created' | 'silent'> {
  const ready = readiness(note.vaultId)?.ready ?? true;
  const meta = (await sql<{ building: boolean }>`SELECT building FROM change_feed_meta WHERE vault_id = ${note.vaultId}`.execute(trx)).rows[0];
  if (ready) {
    if (meta?.building) await sql`UPDATE change_feed_meta SET building = false WHERE vault_id = ${note.vaultId}`.execute(trx);
    return 'created';
  }
  if (meta?.building) return 'silent';
  const { rows } = await sql<{ seen: boolean }>`SELECT EXISTS (SELECT 1 FROM change_feed_state WHERE vault_id = ${note.vaultId}) AS seen`.execute(trx);
  if (rows[0]?.seen) return 'created'; // a catch-up scan after a restart: this note really is new
  // A first build has no history to reset (no cursor can predate it); a rebuild tells readers to resync.
  if (meta) await sql`INSERT INTO change_events (vault_id, kind, path) VALUES (${note.vaultId}, 'reset', '')`.execute(trx);
  await sql`INSERT INTO change_feed_meta (vault_id, building) VALUES (${note.vaultId}, true)
    ON CONFLICT (vault_id) DO UPDATE SET building = true`.execute(trx);
  return 'silent';
}

export function feedContributor(settings: () => FeedSettings, readiness: IndexReadiness = () => undefined): IndexContributor<unknown> {
  // Per vault, this pass: events itemised so far, and changes beyond maxEventsPerPass left to one `gap` row.
  const itemised = new Map<number, number>();
  const skipped = new Map<number, number>();
  const emit = async (trx: DatabaseTransaction, vaultId: number, e: EventIn): Promise<void> => {
    const n = itemised.get(vaultId) ?? 0;
    // Changes made through our tools are always itemised: their callers rely on seeing them.
    if (!e.origin && n >= settings().maxEventsPerPass) {
      skipped.set(vaultId, (skipped.get(vaultId) ?? 0) + 1);
      return;
    }
    itemised.set(vaultId, n + 1);
    await record(trx, vaultId, e, settings);
  };
  const state = async (trx: DatabaseTransaction, id: number) =>
    (await sql<{ path: string; content_hash: string }>`SELECT path, content_hash FROM change_feed_state WHERE note_id = ${id}`.execute(trx)).rows[0];
  const save = (trx: DatabaseTransaction, note: IndexedNote) => sql`
    INSERT INTO change_feed_state (note_id, vault_id, path, content_hash) VALUES (${note.id}, ${note.vaultId}, ${note.path}, ${note.contentHash})
    ON CONFLICT (note_id) DO UPDATE SET path = EXCLUDED.path, content_hash = EXCLUDED.content_hash`.execute(trx);
  return {
    name: 'change-feed',
    version: 1,
    async write(trx, note) {
      const origin = (note as IndexedNote & WithExtras).origin;
      const before = await state(trx, note.id);
      if (!before) {
        if (origin || (await firstSighting(trx, note, readiness)) === 'created') {
          await emit(trx, note.vaultId, { kind: 'created', path: note.path, hash: note.contentHash, origin });
        }
      }
      else {
        if (before.path !== note.path) await emit(trx, note.vaultId, { kind: 'moved', path: note.path, from: before.path, hash: note.contentHash, origin });
        if (before.content_hash !== note.contentHash) await emit(trx, note.vaultId, { kind: 'modified', path: note.path, hash: note.contentHash, origin });
        if (before.path === note.path && before.content_hash === note.contentHash) return; // a re-derive: nothing changed
      }
      await save(trx, note);
    },
    async rename(trx, note, fromPath) {
      const origin = (note as IndexedNote & WithExtras).origin;
      const before = await state(trx, note.id);
      await emit(trx, note.vaultId, { kind: 'moved', path: note.path, from: before?.path ?? fromPath, hash: note.contentHash, origin });
      if (before && before.content_hash !== note.contentHash) await emit(trx, note.vaultId, { kind: 'modified', path: note.path, hash: note.contentHash, origin });
      await save(trx, note);
    },
    async remove(trx, note) {
      const extra = note as typeof note & WithExtras;
      await emit(trx, note.vaultId, { kind: 'deleted', path: note.path, reason: extra.reason ?? 'removed', origin: extra.origin });
      await sql`DELETE FROM change_feed_state WHERE note_id = ${note.id}`.execute(trx);
    },
    async passEnd(trx, { vaultId }) {
      const count = skipped.get(vaultId) ?? 0;
      itemised.delete(vaultId);
      skipped.delete(vaultId);
      if (count > 0) await sql`INSERT INTO change_events (vault_id, kind, path, count) VALUES (${vaultId}, 'gap', '', ${count})`.execute(trx);
    },
  };
}
