// The graph index contributor: keeps graph_nodes/graph_aliases/graph_links in step with the note model
// through the one resolver (src/markdown/resolve-link.ts),
// re-attaching dangling links when a note appears and detaching them when it goes (no full rescan).
// Runs inside the pipeline's transaction, and at a pass's end in the transactions it is given there (the
// re-resolution a bulk batch queued); never reads vault bytes.
import { setImmediate as yieldLoop } from 'node:timers/promises';
import { sql } from 'kysely';
import { resolveLink, buildLinkIndex, type NoteModel, type Link } from '../../src/markdown/index.js';
import {
  type ContributorItem,
  type DatabaseTransaction,
  type IndexContributor,
  type IndexedNote,
  type PassEnd,
  bigintArray,
  jsonb,
  textArray,
  jsonPieces,
  rowSlices,
} from '../../src/sdk/index.js';
import { aliasKey, isAttachmentTarget, nameKeyOfPath, nameKeyOfTarget, targetKeyOf, type Executor } from './common.js';

interface NodeRow {
  note_id: number;
  path: string;
  name_key: string;
  aliases: string[];
}

interface Resolved {
  target_id: number | null;
  ambiguous: boolean;
  candidates: string[];
  attachment: boolean;
}

/** Notes that could answer links with these name keys (every path match shares its name), as an in-memory LinkIndex. */
async function loadIndex(trx: Executor, vaultId: number, nameKeys: string[]) {
  const names = [...new Set(nameKeys.filter(Boolean))];
  const { rows } = await sql<{ note_id: string; path: string }>`
    SELECT g.note_id, g.path FROM graph_nodes g WHERE g.vault_id = ${vaultId} AND g.name_key = ANY(${textArray(names)})`.execute(
    trx,
  );
  const ids = new Map<string, number>(rows.map((r) => [r.path, Number(r.note_id)]));
  return { index: buildLinkIndex(ids.keys()), ids };
}

/**
 * One link through the shared resolver. An ambiguous link belongs to no note (its candidates are kept); a
 * target naming another kind of file (`x.png`, `Books.base`) that no note answers is marked `attachment`,
 * for the tools to look up among the vault's files (the index holds notes only).
 */
function resolveOne(
  target: string,
  fromPath: string,
  selfId: number,
  env: Awaited<ReturnType<typeof loadIndex>>,
): Resolved {
  const r = resolveLink(target, fromPath, env.index);
  const id = r.resolved === null ? null : r.resolved === fromPath ? selfId : (env.ids.get(r.resolved) ?? null);
  return {
    target_id: id,
    ambiguous: r.ambiguous,
    candidates: r.ambiguous ? r.candidates : [],
    attachment: id === null && !r.ambiguous && isAttachmentTarget(target),
  };
}

async function loadNodes(trx: Executor, noteIds: readonly number[]): Promise<Map<number, NodeRow>> {
  const { rows } = await sql<{ note_id: string; path: string; name_key: string; aliases: string[] | null }>`
    SELECT g.note_id, g.path, g.name_key,
      (SELECT coalesce(jsonb_agg(a.key), '[]'::jsonb) FROM graph_aliases a WHERE a.note_id = g.note_id) AS aliases
    FROM graph_nodes g WHERE g.note_id = ANY(${bigintArray(noteIds)})`.execute(trx);
  return new Map(
    rows.map((r) => [
      Number(r.note_id),
      { note_id: Number(r.note_id), path: r.path, name_key: r.name_key, aliases: r.aliases ?? [] },
    ]),
  );
}

async function loadNode(trx: Executor, noteId: number): Promise<NodeRow | undefined> {
  return (await loadNodes(trx, [noteId])).get(noteId);
}

async function insertLinks(
  trx: DatabaseTransaction,
  vaultId: number,
  sources: ReadonlyArray<{ note: IndexedNote; links: Link[] }>,
): Promise<void> {
  const all = sources.flatMap((s) => s.links);
  if (all.length === 0) return;
  const env = await loadIndex(
    trx,
    vaultId,
    all.map((l) => nameKeyOfTarget(l.target)),
  );
  // Resolved and built a statement's worth at a time, so a note of 50,000 links is no single pause.
  const refs = sources.flatMap(({ note, links }) => links.map((l, i) => ({ note, l, i })));
  const rows = rowSlices(refs, ({ note, l, i }) => ({
    source_id: note.id,
    ord: i,
    kind: l.kind,
    embed: l.embed,
    raw: l.raw,
    target: l.target,
    name_key: nameKeyOfTarget(l.target),
    target_key: targetKeyOf(l.target),
    anchor: l.anchor ?? null,
    block_ref: l.blockRef ?? null,
    alias: l.alias ?? null,
    start_offset: l.start,
    line: l.line,
    in_frontmatter: l.inFrontmatter,
    ...resolveOne(l.target, note.path, note.id, env),
  }));
  // 1,000 rows per statement stay well under parameter limits (each batch is one jsonb parameter).
  for (const slice of rows) {
    await sql`
      INSERT INTO graph_links (vault_id, source_id, ord, kind, embed, raw, target, name_key, target_key, anchor, block_ref, alias,
        start_offset, line, in_frontmatter, attachment, target_id, ambiguous, candidates)
      SELECT ${vaultId}, r.source_id, r.ord, r.kind, r.embed, r.raw, r.target, r.name_key, r.target_key, r.anchor, r.block_ref, r.alias,
        r.start_offset, r.line, r.in_frontmatter, r.attachment, r.target_id, r.ambiguous, r.candidates
      FROM jsonb_to_recordset(${jsonb(slice)}) AS r(source_id bigint, ord int, kind text, embed boolean, raw text, target text, name_key text,
        target_key text, anchor text, block_ref text, alias text, start_offset int, line int, in_frontmatter boolean, attachment boolean,
        target_id bigint, ambiguous boolean, candidates jsonb)`.execute(trx);
  }
}

interface Reach {
  nameKeys: string[];
  targetIds?: readonly number[];
  /** Re-resolve these sources' links too (a renamed note's own relative links). */
  sourceId?: number;
  /** Skip links of these sources (already resolved fresh). */
  excludeSources?: readonly number[];
}

/** Re-resolve every link that a change to these names, aliases or this note could affect; update only changed rows. */
export async function reresolve(trx: DatabaseTransaction, vaultId: number, reach: Reach): Promise<number> {
  const names = [...new Set(reach.nameKeys.filter(Boolean))];
  // Each link's source node is looked up by key (LATERAL … LIMIT 1 keeps it a lookup): as a join, the plan read all of
  // graph_nodes into a hash once per batch of a first index, a cost that grew with every batch (the update below
  // scanned graph_links alike).
  const { rows } = await sql<{
    id: string;
    source_id: string;
    source_path: string;
    target: string;
    target_id: string | null;
    ambiguous: boolean;
    candidates: string[];
    attachment: boolean;
  }>`
    SELECT l.id, l.source_id, s.path AS source_path, l.target, l.target_id, l.ambiguous, l.candidates, l.attachment
    FROM graph_links l CROSS JOIN LATERAL (SELECT n.path FROM graph_nodes n WHERE n.note_id = l.source_id LIMIT 1) s
    WHERE l.vault_id = ${vaultId}
      AND (l.name_key = ANY(${textArray(names)})
           OR l.target_id = ANY(${bigintArray(reach.targetIds ?? [])}) OR l.source_id = ${reach.sourceId ?? -1})
      AND NOT (l.source_id = ANY(${bigintArray(reach.excludeSources ?? [])}))`.execute(trx);
  if (rows.length === 0) return 0;
  const env = await loadIndex(
    trx,
    vaultId,
    rows.map((r) => nameKeyOfTarget(r.target)),
  );
  const changed: Array<Resolved & { id: number }> = [];
  for (const r of rows) {
    const next = resolveOne(r.target, r.source_path, Number(r.source_id), env);
    const before = r.target_id === null ? null : Number(r.target_id);
    if (
      before !== next.target_id ||
      r.ambiguous !== next.ambiguous ||
      r.attachment !== next.attachment ||
      JSON.stringify(r.candidates) !== JSON.stringify(next.candidates)
    ) {
      changed.push({ id: Number(r.id), ...next });
    }
  }
  // By key (`= ANY` of the ids), as the source's node above: see there.
  for (let i = 0; i < changed.length; i += 1000) {
    const slice = changed.slice(i, i + 1000);
    await sql`
      UPDATE graph_links l SET target_id = u.target_id, ambiguous = u.ambiguous, candidates = u.candidates, attachment = u.attachment
      FROM jsonb_to_recordset(${jsonb(slice)}) AS u(id bigint, target_id bigint, ambiguous boolean, candidates jsonb, attachment boolean)
      WHERE l.id = u.id AND l.id = ANY(${bigintArray(slice.map((u) => u.id))})`.execute(trx);
  }
  return changed.length;
}

async function setAliases(
  trx: DatabaseTransaction,
  vaultId: number,
  changes: ReadonlyArray<{ id: number; keys: string[] }>,
): Promise<void> {
  if (changes.length === 0) return;
  await sql`DELETE FROM graph_aliases WHERE note_id = ANY(${bigintArray(changes.map((c) => c.id))})`.execute(trx);
  const rows = changes.flatMap((c) => c.keys.map((key) => ({ note_id: c.id, key })));
  if (rows.length === 0) return;
  await sql`INSERT INTO graph_aliases (note_id, vault_id, key)
    SELECT r.note_id, ${vaultId}, r.key FROM jsonb_to_recordset(${jsonb(rows)}) AS r(note_id bigint, key text)`.execute(
    trx,
  );
}

/**
 * New notes in one batch from which the links their names could answer are re-resolved at the pass's end, once,
 * not by the batch: a first index re-resolved, batch after batch, every link to a name the batch's notes share with
 * notes already indexed, so a vault of many same-named notes (a `README` per folder, a vault copied into itself)
 * updated each such link once per copy (60 notes/s over 40 copies of a 118-note vault). A write-through of a few
 * notes re-resolves in its own transaction as before.
 */
const SWEEP_FROM = 16;
/** Names re-resolved per transaction of a pass end's sweep (the event loop turns between them). */
const SWEEP_NAMES = 500;

/**
 * Whether this transaction has removed or renamed more than SWEEP_FROM notes, counting the `notes` it removes or renames
 * now (a folder deleted or moved in one batch): from then on the names such a note could answer wait for the pass end's
 * sweep, as a bulk batch's new notes do.
 */
const touched = new WeakMap<DatabaseTransaction, number>();
function bulkIn(trx: DatabaseTransaction, notes = 1): boolean {
  const n = (touched.get(trx) ?? 0) + notes;
  touched.set(trx, n);
  return n > SWEEP_FROM;
}

/** Queue names for the pass end's sweep, in the batch's transaction: a process that stops first leaves them queued. */
async function queueNames(trx: DatabaseTransaction, vaultId: number, nameKeys: readonly string[]): Promise<void> {
  const names = [...new Set(nameKeys.filter(Boolean))];
  if (names.length === 0) return;
  await sql`INSERT INTO graph_pending (vault_id, name_key) SELECT ${vaultId}, n FROM unnest(${textArray(names)}) AS n
    ON CONFLICT DO NOTHING`.execute(trx);
}

/** Re-resolve the links of every queued name, a slice of names per transaction, and drop them from the queue. */
async function sweep(pass: PassEnd): Promise<void> {
  for (;;) {
    const done = await pass.transaction(async (trx) => {
      const { rows } = await sql<{ name_key: string }>`
        DELETE FROM graph_pending WHERE vault_id = ${pass.vaultId} AND name_key IN (
          SELECT name_key FROM graph_pending WHERE vault_id = ${pass.vaultId} ORDER BY name_key LIMIT ${SWEEP_NAMES})
        RETURNING name_key`.execute(trx);
      if (rows.length > 0)
        await reresolve(trx, pass.vaultId, {
          nameKeys: rows.map((r) => r.name_key),
        });
      return rows.length < SWEEP_NAMES;
    });
    if (done) return;
    await yieldLoop();
  }
}

function sameSet(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}

export function graphContributor(getCap: () => number): IndexContributor<NoteModel> {
  /** Vaults whose queue this process added to since its last sweep there. */
  const queued = new Set<number>();
  /** One batch of distinct notes: nodes and aliases first, so links within the batch resolve to each other. */
  const writeMany = async (
    trx: DatabaseTransaction,
    items: ReadonlyArray<ContributorItem<NoteModel>>,
  ): Promise<void> => {
    if (items.length === 0) return;
    const vaultId = items[0].note.vaultId;
    const ids = items.map((i) => i.note.id);
    const old = await loadNodes(trx, ids);
    const cap = getCap();
    const nodes = items.map(({ note, model }) => ({
      note,
      model,
      nameKey: nameKeyOfPath(note.path),
      aliases: [...new Set(model.aliases.map(aliasKey).filter(Boolean))],
      links: model.links.slice(0, cap),
      before: old.get(note.id),
    }));
    const nodeRows = nodes.map((n) => ({
      note_id: n.note.id,
      path: n.note.path,
      name_key: n.nameKey,
      link_count: n.model.links.length,
      links_truncated: n.model.links.length > cap,
      fm_error: n.model.frontmatter.error
        ? `${n.model.frontmatter.error.code}: ${n.model.frontmatter.error.message}`.slice(0, 500)
        : null,
    }));
    await sql`
      INSERT INTO graph_nodes (note_id, vault_id, path, name_key, link_count, links_truncated, fm_error)
      SELECT r.note_id, ${vaultId}, r.path, r.name_key, r.link_count, r.links_truncated, r.fm_error
      FROM jsonb_to_recordset(${jsonb(nodeRows)}) AS r(note_id bigint, path text, name_key text, link_count int, links_truncated boolean, fm_error text)
      ON CONFLICT (note_id) DO UPDATE SET path = EXCLUDED.path, name_key = EXCLUDED.name_key, link_count = EXCLUDED.link_count,
        links_truncated = EXCLUDED.links_truncated, fm_error = EXCLUDED.fm_error`.execute(trx);
    const aliasChanged = nodes.filter((n) => !n.before || !sameSet(n.before.aliases, n.aliases));
    await setAliases(
      trx,
      vaultId,
      aliasChanged.map((n) => ({ id: n.note.id, keys: n.aliases })),
    );
    await sql`DELETE FROM graph_links WHERE source_id = ANY(${bigintArray(ids)})`.execute(trx);
    await insertLinks(
      trx,
      vaultId,
      nodes.map((n) => ({ note: n.note, links: n.links })),
    );
    // New or moved notes can answer (or stop answering) other notes' links; aliases never resolve links. A bulk
    // batch's new notes are left to the pass end's sweep (SWEEP_FROM).
    const fresh = nodes.filter((n) => !n.before);
    const bulk = fresh.length >= SWEEP_FROM;
    if (bulk) {
      await queueNames(
        trx,
        vaultId,
        fresh.map((n) => n.nameKey),
      );
      queued.add(vaultId);
    }
    const reach = nodes.filter((n) => (!n.before && !bulk) || (n.before && n.before.path !== n.note.path));
    if (reach.length > 0) {
      await reresolve(trx, vaultId, {
        nameKeys: reach.flatMap((n) => [n.nameKey, n.before?.name_key ?? '']),
        targetIds: reach.map((n) => n.note.id),
        excludeSources: ids,
      });
    }
  };
  return {
    name: 'graph-links',
    // 2: Obsidian's rules (docs/links.md): no alias resolution, ambiguous links belong to no note.
    version: 2,
    write(trx, note, model) {
      return writeMany(trx, [{ note, model }]);
    },
    writeMany,
    // The end of a full pass (every start, a lease taken over, each reconcile) also sweeps what another process
    // or an earlier one left queued; other pass ends sweep only what this one queued.
    async passEnd(_db, pass) {
      if (!pass.caughtUp && !queued.has(pass.vaultId)) return;
      queued.delete(pass.vaultId);
      try {
        await sweep(pass);
      } catch (e) {
        queued.add(pass.vaultId); // still queued in the table: the next pass end tries again
        throw e;
      }
    },
    // Links keep their targets current through re-resolution, so a note's rows change only with its own
    // path, aliases, links (offsets included), frontmatter error or the cap.
    fingerprint: (note, model) =>
      jsonPieces(
        [
          note.path,
          model.aliases,
          model.frontmatter.error?.code ?? null,
          model.frontmatter.error?.message ?? null,
          getCap(),
        ],
        model.links,
      ),
    async rename(trx, note, fromPath) {
      const old = await loadNode(trx, note.id);
      if (!old) return; // never seen: the pipeline's write will follow
      const nameKey = nameKeyOfPath(note.path);
      await sql`UPDATE graph_nodes SET path = ${note.path}, name_key = ${nameKey} WHERE note_id = ${note.id}`.execute(
        trx,
      );
      const nameKeys = [nameKey, old.name_key, nameKeyOfPath(fromPath)];
      if (bulkIn(trx)) {
        // Links that resolved to the note carry its old name: the sweep finds them by it. Its own links (relative
        // ones follow its folder) are re-resolved now.
        await queueNames(trx, note.vaultId, nameKeys);
        queued.add(note.vaultId);
        await reresolve(trx, note.vaultId, { nameKeys: [], sourceId: note.id });
        return;
      }
      await reresolve(trx, note.vaultId, { nameKeys, targetIds: [note.id], sourceId: note.id });
    },
    async remove(trx, note) {
      const old = await loadNode(trx, note.id);
      await sql`DELETE FROM graph_links WHERE source_id = ${note.id}`.execute(trx);
      await sql`DELETE FROM graph_aliases WHERE note_id = ${note.id}`.execute(trx);
      await sql`DELETE FROM graph_nodes WHERE note_id = ${note.id}`.execute(trx);
      const nameKeys = [nameKeyOfPath(note.path), old?.name_key ?? ''];
      if (bulkIn(trx)) {
        // Links that resolved to the note carry one of these names (its row going sets their target to NULL).
        await queueNames(trx, note.vaultId, nameKeys);
        queued.add(note.vaultId);
        return;
      }
      await reresolve(trx, note.vaultId, { nameKeys, targetIds: [note.id], excludeSources: [note.id] });
    },
    async removeMany(trx, notes) {
      const ids = notes.map((n) => n.id);
      const old = await loadNodes(trx, ids);
      const list = bigintArray(ids);
      await sql`DELETE FROM graph_links WHERE source_id = ANY(${list})`.execute(trx);
      await sql`DELETE FROM graph_aliases WHERE note_id = ANY(${list})`.execute(trx);
      await sql`DELETE FROM graph_nodes WHERE note_id = ANY(${list})`.execute(trx);
      const vaultId = notes[0].vaultId;
      const nameKeys = notes.flatMap((n) => [nameKeyOfPath(n.path), old.get(n.id)?.name_key ?? '']);
      // As `remove` one note at a time: past SWEEP_FROM removals in this transaction the names wait for the
      // pass end's sweep; fewer are re-resolved here, in one statement for all of them.
      if (bulkIn(trx, notes.length)) {
        await queueNames(trx, vaultId, nameKeys);
        queued.add(vaultId);
        return;
      }
      await reresolve(trx, vaultId, { nameKeys, targetIds: ids, excludeSources: ids });
    },
  };
}
