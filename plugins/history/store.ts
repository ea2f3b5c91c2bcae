// The history store: record versions (content-addressed, deduplicated per vault) and revisions, read
// them back, and prune by age and size. SQL only; every query is scoped by vault_id, so a revision
// of another vault is simply not found.
import { sql } from 'kysely';
import { type Database, agentActorSql, bigintArray, jsonb, textArray } from '../../src/sdk/index.js';

export type RevisionKind = 'outside' | 'create' | 'write' | 'move' | 'delete';

export interface RevisionRow {
  /** The revision's number within its vault (`seq`; the table's own id is never shown). */
  id: string;
  path: string;
  at: Date | string;
  kind: RevisionKind;
  target: 'note' | 'file';
  hash: string | null;
  previous_hash: string | null;
  from_path: string | null;
  size: number | null;
  skipped: string | null;
  actor_kind: string;
  actor_id: string | null;
  actor_name: string | null;
  user_name: string | null;
  client_name: string | null;
  client_id: string | null;
  tool: string | null;
  event_id: string | null;
}

export interface NewRevision {
  vaultId: number;
  path: string;
  kind: RevisionKind;
  target: 'note' | 'file';
  hash: string | null;
  previousHash: string | null;
  fromPath?: string | null;
  size: number | null;
  skipped?: string | null;
  actor?: { kind: string; id: string; name: string };
  user?: string | null;
  client?: string | null;
  clientId?: string | null;
  tool?: string | null;
  at: Date;
}

export interface Blob {
  hash: string;
  bytes: Uint8Array;
}

const COLUMNS = sql`seq AS id, path, at, kind, target, hash, previous_hash, from_path, size, skipped, actor_kind, actor_id, actor_name, user_name, client_name, client_id, tool, event_id`;

/**
 * The version found at a path before a tool writes it, kept when it is not already the path's latest
 * revision (an outside editor changed it, or it was never recorded): one statement, the blob deduplicated.
 */
export async function keepIncumbent(
  db: Database,
  vaultId: number,
  path: string,
  target: 'note' | 'file',
  blob: Blob | null,
  hash: string | null,
  size: number,
  skipped: string | null,
  at: Date,
): Promise<void> {
  const insertBlob = blob
    ? sql`, b AS (INSERT INTO history_blobs (vault_id, hash, size, content) VALUES (${vaultId}, ${hash}, ${size}, ${Buffer.from(blob.bytes)}) ON CONFLICT DO NOTHING)`
    : sql``;
  await sql`
    WITH last AS (SELECT hash FROM history_revisions WHERE vault_id = ${vaultId} AND path = ${path} ORDER BY seq DESC LIMIT 1)${insertBlob}
    INSERT INTO history_revisions (vault_id, path, at, kind, target, hash, size, skipped, actor_kind)
    SELECT ${vaultId}, ${path}, ${new Date(at.getTime() - 1)}, 'outside', ${target}, ${hash}, ${size}, ${skipped}, 'human'
    WHERE NOT EXISTS (SELECT 1 FROM last WHERE last.hash IS NOT DISTINCT FROM ${hash})`.execute(db);
}

/** A revision to add, with its new version's blob when one is kept. */
export interface PendingRevision {
  readonly revision: NewRevision;
  readonly blob: Blob | null;
}

/**
 * Revisions (and their new versions' blobs) in one statement, in the order given, each linked to the
 * change-feed event it belongs to when the feed runs. Concurrent writers' revisions share a statement.
 */
export async function addRevisions(
  db: Database,
  batch: readonly PendingRevision[],
  linkEvents: boolean,
): Promise<void> {
  if (batch.length === 0) return;
  const blobs = batch.filter((p): p is PendingRevision & { blob: Blob } => p.blob !== null);
  const insertBlobs = blobs.length
    ? sql`WITH b AS (INSERT INTO history_blobs (vault_id, hash, size, content) VALUES ${sql.join(blobs.map(({ revision: r, blob: b }) => sql`(${r.vaultId}, ${b.hash}, ${b.bytes.length}, ${Buffer.from(b.bytes)})`))} ON CONFLICT DO NOTHING) `
    : sql``;
  const event = (r: NewRevision) =>
    linkEvents && r.actor
      ? sql`(SELECT seq FROM change_events WHERE vault_id = ${r.vaultId} AND path = ${r.path} AND actor_id = ${r.actor.id} ORDER BY vault_id DESC, seq DESC LIMIT 1)`
      : sql`NULL::bigint`;
  const rows = batch.map(
    ({
      revision: r,
    }) => sql`(${r.vaultId}, ${r.path}, ${r.at}, ${r.kind}, ${r.target}, ${r.hash}, ${r.previousHash}, ${r.fromPath ?? null}, ${r.size}, ${r.skipped ?? null},
            ${r.actor?.kind ?? 'human'}, ${r.actor?.id ?? null}, ${r.actor?.name ?? null}, ${r.user ?? null}, ${r.client ?? null}, ${r.clientId ?? null}, ${r.tool ?? null}, ${event(r)})`,
  );
  await sql`${insertBlobs}
    INSERT INTO history_revisions (vault_id, path, at, kind, target, hash, previous_hash, from_path, size, skipped, actor_kind, actor_id, actor_name, user_name, client_name, client_id, tool, event_id)
    VALUES ${sql.join(rows)}`.execute(db);
}

/** The latest revision at a path (for a move: the hash it carries along). */
export async function latest(db: Database, vaultId: number, path: string): Promise<RevisionRow | undefined> {
  return (
    await sql<RevisionRow>`SELECT ${COLUMNS} FROM history_revisions WHERE vault_id = ${vaultId} AND path = ${path} ORDER BY seq DESC LIMIT 1`.execute(
      db,
    )
  ).rows[0];
}

/**
 * The paths a note was at before it reached `path`, each with the revision number its move left it at:
 * the note's history is the note's, wherever it moved (issue 43). Follows move revisions backwards;
 * every step goes to a lower number, so a note moved in a circle still ends.
 */
const lineage = (vaultId: number, path: string) => sql`
  WITH RECURSIVE chain(path, below) AS (
    SELECT ${path}::text, NULL::bigint
    UNION
    SELECT m.from_path, m.seq FROM chain c JOIN history_revisions m
      ON m.vault_id = ${vaultId} AND m.path = c.path AND m.kind = 'move' AND m.from_path IS NOT NULL
      AND (c.below IS NULL OR m.seq < c.below)
  )`;

/** Revisions of a note, newest first, below `beforeId` when paging: its own and those it brought along a move. */
export async function listRevisions(
  db: Database,
  vaultId: number,
  path: string,
  limit: number,
  beforeId: number | null,
): Promise<RevisionRow[]> {
  const below = beforeId === null ? sql`true` : sql`r.seq < ${beforeId}`;
  return (
    await sql<RevisionRow>`${lineage(vaultId, path)}
    SELECT ${COLUMNS} FROM history_revisions WHERE id IN (
      SELECT r.id FROM history_revisions r JOIN chain c
        ON r.vault_id = ${vaultId} AND r.path = c.path AND (c.below IS NULL OR r.seq < c.below)
      WHERE ${below})
    ORDER BY seq DESC LIMIT ${limit}`.execute(db)
  ).rows;
}

/** Whether revision `id` belongs to the note now at `path` (at that path, or at one it moved from). */
export async function inLineage(db: Database, vaultId: number, path: string, id: number): Promise<boolean> {
  const { rows } = await sql`${lineage(vaultId, path)}
    SELECT 1 FROM history_revisions r JOIN chain c
      ON r.vault_id = ${vaultId} AND r.path = c.path AND (c.below IS NULL OR r.seq < c.below)
    WHERE r.seq = ${id} LIMIT 1`.execute(db);
  return rows.length > 0;
}

/**
 * Where the note last recorded at `path` went, when a move took it away after its latest revision there
 * (followed through later moves, a bounded number of steps): null when it did not move away.
 */
export async function movedTo(db: Database, vaultId: number, path: string): Promise<string | null> {
  let at = path;
  let after = Number((await latest(db, vaultId, path))?.id ?? 0);
  for (let step = 0; step < 32; step++) {
    const next = (
      await sql<{ path: string; seq: string }>`SELECT path, seq FROM history_revisions
        WHERE vault_id = ${vaultId} AND kind = 'move' AND from_path = ${at} AND seq > ${after}
        ORDER BY seq LIMIT 1`.execute(db)
    ).rows[0];
    if (!next) break;
    at = next.path;
    after = Number(next.seq);
  }
  return at === path ? null : at;
}

export async function revision(db: Database, vaultId: number, id: number): Promise<RevisionRow | undefined> {
  return (
    await sql<RevisionRow>`SELECT ${COLUMNS} FROM history_revisions WHERE vault_id = ${vaultId} AND seq = ${id}`.execute(
      db,
    )
  ).rows[0];
}

export async function blob(db: Database, vaultId: number, hash: string): Promise<Buffer | undefined> {
  const row = (
    await sql<{
      content: Uint8Array;
    }>`SELECT content FROM history_blobs WHERE vault_id = ${vaultId} AND hash = ${hash}`.execute(db)
  ).rows[0];
  return row ? Buffer.from(row.content) : undefined;
}

/** Whether a content hash was ever recorded for this path (a note we know, not another one). */
export async function knownHash(db: Database, vaultId: number, path: string, hash: string): Promise<boolean> {
  const { rows } =
    await sql`SELECT 1 FROM history_revisions WHERE vault_id = ${vaultId} AND path = ${path} AND (hash = ${hash} OR previous_hash = ${hash}) LIMIT 1`.execute(
      db,
    );
  return rows.length > 0;
}

/** Paths whose latest revision is a delete, newest first (whether the file is back is checked by the caller). */
export async function deletedNotes(
  db: Database,
  vaultId: number,
  limit: number,
  beforeId: number | null,
): Promise<RevisionRow[]> {
  const below = beforeId === null ? sql`true` : sql`seq < ${beforeId}`;
  return (
    await sql<RevisionRow>`
    SELECT ${COLUMNS} FROM (
      SELECT DISTINCT ON (path) * FROM history_revisions WHERE vault_id = ${vaultId} ORDER BY path, seq DESC
    ) l WHERE kind = 'delete' AND ${below} ORDER BY seq DESC LIMIT ${limit}`.execute(db)
  ).rows;
}

export interface UndoFilter {
  since?: Date;
  until?: Date;
  credential?: string;
  client?: string;
  paths?: readonly string[];
}

/** Agent revisions matching an undo selection (never outside edits), oldest first. */
export async function agentRevisions(
  db: Database,
  vaultId: number,
  f: UndoFilter,
  cap: number,
): Promise<RevisionRow[]> {
  const where = [sql`vault_id = ${vaultId}`, agentActorSql(), sql`kind <> 'outside'`];
  if (f.since) where.push(sql`at >= ${f.since}`);
  if (f.until) where.push(sql`at <= ${f.until}`);
  if (f.credential) where.push(sql`(actor_id = ${f.credential} OR actor_name = ${f.credential})`);
  if (f.client) where.push(sql`(client_name = ${f.client} OR client_id = ${f.client})`);
  if (f.paths?.length) where.push(sql`path = ANY(${textArray(f.paths)})`);
  return (
    await sql<RevisionRow>`SELECT ${COLUMNS} FROM history_revisions WHERE ${sql.join(where, sql` AND `)} ORDER BY seq LIMIT ${cap}`.execute(
      db,
    )
  ).rows;
}

/** The newest revision id of a vault (0 when none): an undo ignores the revisions it makes itself. */
export async function newestRevisionId(db: Database, vaultId: number): Promise<number> {
  const row = (
    await sql<{ m: string | null }>`SELECT max(seq) AS m FROM history_revisions WHERE vault_id = ${vaultId}`.execute(db)
  ).rows[0];
  return Number(row?.m ?? 0);
}

/** Every revision of a path after `afterId` (to see who else changed it since). */
export async function revisionsAfter(
  db: Database,
  vaultId: number,
  path: string,
  afterId: number,
): Promise<RevisionRow[]> {
  return (
    await sql<RevisionRow>`SELECT ${COLUMNS} FROM history_revisions WHERE vault_id = ${vaultId} AND path = ${path} AND seq > ${afterId} ORDER BY seq`.execute(
      db,
    )
  ).rows;
}

export interface StoreSize {
  revisions: number;
  versions: number;
  bytes: number;
}

export async function storeSize(db: Database, vaultId?: number): Promise<StoreSize> {
  const v = vaultId === undefined ? sql`true` : sql`vault_id = ${vaultId}`;
  const row = (
    await sql<{ r: string; b: string; s: string | null }>`
    SELECT (SELECT count(*) FROM history_revisions WHERE ${v}) AS r, count(*) AS b, sum(size) AS s FROM history_blobs WHERE ${v}`.execute(
      db,
    )
  ).rows[0];
  return { revisions: Number(row.r), versions: Number(row.b), bytes: Number(row.s ?? 0) };
}

export interface PruneScope {
  /** Only these vaults' history (a server prunes the vaults it serves); absent: every vault's (the CLI). */
  readonly vaults?: readonly number[];
  /** Versions kept whether a revision names them or not (the prior versions of writes in progress). */
  readonly spare?: ReadonlyArray<{ vaultId: number; hash: string }>;
}

/** Drop revisions past the age limit, then the oldest of any vault over the size limit, then unreferenced versions. */
export async function prune(
  db: Database,
  retentionDays: number,
  maxStoreBytes: number,
  now = new Date(),
  { vaults, spare = [] }: PruneScope = {},
): Promise<{ revisions: number; versions: number }> {
  const cutoff = new Date(now.getTime() - retentionDays * 86_400_000);
  if (vaults?.length === 0) return { revisions: 0, versions: 0 };
  const inVaults = vaults === undefined ? sql`true` : sql`vault_id = ANY(${bigintArray(vaults)})`;
  let revisions = Number(
    (await sql`DELETE FROM history_revisions WHERE at < ${cutoff} AND ${inVaults}`.execute(db)).numAffectedRows ?? 0,
  );
  let versions = 0;
  if (vaults === undefined) versions += await collect(db, spare);
  else for (const id of vaults) versions += await collect(db, spare, id);
  const over = (
    await sql<{
      vault_id: number;
      s: string;
    }>`SELECT vault_id, sum(size) AS s FROM history_blobs WHERE ${inVaults}
      GROUP BY vault_id HAVING sum(size) > ${maxStoreBytes}`.execute(db)
  ).rows;
  for (const { vault_id } of over) {
    for (let round = 0; round < 1000; round++) {
      const size = Number(
        (
          await sql<{
            s: string | null;
          }>`SELECT sum(size) AS s FROM history_blobs WHERE vault_id = ${vault_id}`.execute(db)
        ).rows[0].s ?? 0,
      );
      if (size <= maxStoreBytes) break;
      const gone = Number(
        (
          await sql`DELETE FROM history_revisions WHERE id IN (SELECT id FROM history_revisions WHERE vault_id = ${vault_id} ORDER BY id LIMIT 200)`.execute(
            db,
          )
        ).numAffectedRows ?? 0,
      );
      revisions += gone;
      versions += await collect(db, spare, vault_id);
      if (gone === 0) break;
    }
  }
  return { revisions, versions };
}

async function collect(
  db: Database,
  spare: ReadonlyArray<{ vaultId: number; hash: string }>,
  vaultId?: number,
): Promise<number> {
  const v = vaultId === undefined ? sql`true` : sql`b.vault_id = ${vaultId}`;
  const spared = spare.length
    ? sql`AND NOT EXISTS (SELECT 1 FROM jsonb_to_recordset(${jsonb(spare)}) AS s("vaultId" integer, hash text)
        WHERE s."vaultId" = b.vault_id AND s.hash = b.hash)`
    : sql``;
  // SHARE on the revisions first: a revision being added (it may name a version already stored) commits before
  // the delete takes its snapshot, and none is added until the delete is done. Without it, a revision committed
  // between the delete's snapshot and its row would name bytes the delete removes (on a server; PGlite runs one
  // statement at a time).
  const r = await db.transaction().execute(async (trx) => {
    await sql`LOCK TABLE history_revisions IN SHARE MODE`.execute(trx);
    return sql`DELETE FROM history_blobs b WHERE ${v} AND NOT EXISTS (
      SELECT 1 FROM history_revisions r WHERE r.vault_id = b.vault_id AND (r.hash = b.hash OR r.previous_hash = b.hash))
      ${spared}`.execute(trx);
  });
  return Number(r.numAffectedRows ?? 0);
}
