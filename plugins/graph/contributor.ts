// The graph index contributor: keeps graph_nodes/graph_aliases/graph_links in step with the note model,
// re-attaching dangling links when a note appears and detaching them when it goes (no full rescan).
// Runs only inside the pipeline's transaction; never reads vault bytes and never commits by itself.
import { sql } from 'kysely';
import { resolveLink, buildLinkIndex, type NoteModel, type Link } from '../../src/markdown/index.js';
import type { DatabaseTransaction, IndexContributor, IndexedNote } from '../../src/sdk/types.js';
import { aliasKey, isAttachmentTarget, jsonb, nameKeyOfPath, nameKeyOfTarget, targetKeyOf, textArray, type Executor } from './common.js';

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

/** Notes that could answer links with these name keys or alias keys, as an in-memory LinkIndex. */
async function loadIndex(trx: Executor, vaultId: number, nameKeys: string[], targetKeys: string[]) {
  const names = [...new Set(nameKeys.filter(Boolean))];
  const keys = [...new Set(targetKeys.filter(Boolean))];
  const { rows } = await sql<{ note_id: string; path: string; alias: string | null }>`
    SELECT g.note_id, g.path, NULL AS alias FROM graph_nodes g
      WHERE g.vault_id = ${vaultId} AND g.name_key = ANY(${textArray(names)})
    UNION ALL
    SELECT g.note_id, g.path, a.key AS alias FROM graph_aliases a JOIN graph_nodes g ON g.note_id = a.note_id
      WHERE a.vault_id = ${vaultId} AND a.key = ANY(${textArray(keys)})`.execute(trx);
  const ids = new Map<string, number>();
  const aliasMap = new Map<string, string[]>();
  const paths: string[] = [];
  for (const r of rows) {
    ids.set(r.path, Number(r.note_id));
    if (r.alias === null) paths.push(r.path);
    else aliasMap.set(r.path, [...(aliasMap.get(r.path) ?? []), r.alias]);
  }
  return { index: buildLinkIndex(paths, aliasMap), ids };
}

function resolveOne(target: string, fromPath: string, selfId: number, env: Awaited<ReturnType<typeof loadIndex>>): Resolved {
  const r = resolveLink(target, fromPath, env.index);
  const id = r.resolved === null ? null : r.resolved === fromPath ? selfId : (env.ids.get(r.resolved) ?? null);
  return {
    target_id: id,
    ambiguous: r.ambiguous,
    candidates: r.ambiguous ? r.candidates : [],
    attachment: id === null && !r.ambiguous && isAttachmentTarget(target),
  };
}

async function loadNode(trx: Executor, noteId: number): Promise<NodeRow | undefined> {
  const { rows } = await sql<{ note_id: string; path: string; name_key: string; aliases: string[] | null }>`
    SELECT g.note_id, g.path, g.name_key,
      (SELECT coalesce(jsonb_agg(a.key), '[]'::jsonb) FROM graph_aliases a WHERE a.note_id = g.note_id) AS aliases
    FROM graph_nodes g WHERE g.note_id = ${noteId}`.execute(trx);
  const r = rows[0];
  return r ? { note_id: Number(r.note_id), path: r.path, name_key: r.name_key, aliases: r.aliases ?? [] } : undefined;
}

async function insertLinks(trx: DatabaseTransaction, note: IndexedNote, links: Link[]): Promise<void> {
  if (links.length === 0) return;
  const env = await loadIndex(trx, note.vaultId, links.map((l) => nameKeyOfTarget(l.target)), links.map((l) => targetKeyOf(l.target)));
  const rows = links.map((l, i) => {
    const r = resolveOne(l.target, note.path, note.id, env);
    return {
      ord: i, kind: l.kind, embed: l.embed, raw: l.raw, target: l.target, name_key: nameKeyOfTarget(l.target), target_key: targetKeyOf(l.target),
      anchor: l.anchor ?? null, block_ref: l.blockRef ?? null, alias: l.alias ?? null, start_offset: l.start, line: l.line, in_frontmatter: l.inFrontmatter,
      ...r,
    };
  });
  // One statement per batch keeps big notes cheap; 1,000 rows stay well under parameter limits (it is one jsonb).
  for (let i = 0; i < rows.length; i += 1000) {
    await sql`
      INSERT INTO graph_links (vault_id, source_id, ord, kind, embed, raw, target, name_key, target_key, anchor, block_ref, alias,
        start_offset, line, in_frontmatter, attachment, target_id, ambiguous, candidates)
      SELECT ${note.vaultId}, ${note.id}, r.ord, r.kind, r.embed, r.raw, r.target, r.name_key, r.target_key, r.anchor, r.block_ref, r.alias,
        r.start_offset, r.line, r.in_frontmatter, r.attachment, r.target_id, r.ambiguous, r.candidates
      FROM jsonb_to_recordset(${jsonb(rows.slice(i, i + 1000))}) AS r(ord int, kind text, embed boolean, raw text, target text, name_key text,
        target_key text, anchor text, block_ref text, alias text, start_offset int, line int, in_frontmatter boolean, attachment boolean,
        target_id bigint, ambiguous boolean, candidates jsonb)`.execute(trx);
  }
}

interface Reach {
  nameKeys: string[];
  targetKeys: string[];
  targetId?: number;
  /** Re-resolve these sources' links too (a renamed note's own relative links). */
  sourceId?: number;
  /** Skip links of this source (already resolved fresh). */
  excludeSource?: number;
}

/** Re-resolve every link that a change to these names, aliases or this note could affect; update only changed rows. */
export async function reresolve(trx: DatabaseTransaction, vaultId: number, reach: Reach): Promise<number> {
  const names = [...new Set(reach.nameKeys.filter(Boolean))];
  const keys = [...new Set(reach.targetKeys.filter(Boolean))];
  const { rows } = await sql<{ id: string; source_id: string; source_path: string; target: string; target_id: string | null; ambiguous: boolean; candidates: string[]; attachment: boolean }>`
    SELECT l.id, l.source_id, s.path AS source_path, l.target, l.target_id, l.ambiguous, l.candidates, l.attachment
    FROM graph_links l JOIN graph_nodes s ON s.note_id = l.source_id
    WHERE l.vault_id = ${vaultId}
      AND (l.name_key = ANY(${textArray(names)}) OR l.target_key = ANY(${textArray(keys)})
           OR l.target_id = ${reach.targetId ?? -1} OR l.source_id = ${reach.sourceId ?? -1})
      AND l.source_id <> ${reach.excludeSource ?? -1}`.execute(trx);
  if (rows.length === 0) return 0;
  const env = await loadIndex(trx, vaultId, rows.map((r) => nameKeyOfTarget(r.target)), rows.map((r) => targetKeyOf(r.target)));
  const changed: Array<Resolved & { id: number }> = [];
  for (const r of rows) {
    const next = resolveOne(r.target, r.source_path, Number(r.source_id), env);
    const before = r.target_id === null ? null : Number(r.target_id);
    if (before !== next.target_id || r.ambiguous !== next.ambiguous || r.attachment !== next.attachment || JSON.stringify(r.candidates) !== JSON.stringify(next.candidates)) {
      changed.push({ id: Number(r.id), ...next });
    }
  }
  for (let i = 0; i < changed.length; i += 1000) {
    await sql`
      UPDATE graph_links l SET target_id = u.target_id, ambiguous = u.ambiguous, candidates = u.candidates, attachment = u.attachment
      FROM jsonb_to_recordset(${jsonb(changed.slice(i, i + 1000))}) AS u(id bigint, target_id bigint, ambiguous boolean, candidates jsonb, attachment boolean)
      WHERE l.id = u.id`.execute(trx);
  }
  return changed.length;
}

async function setAliases(trx: DatabaseTransaction, note: { id: number; vaultId: number }, keys: string[]): Promise<void> {
  await sql`DELETE FROM graph_aliases WHERE note_id = ${note.id}`.execute(trx);
  if (keys.length === 0) return;
  await sql`INSERT INTO graph_aliases (note_id, vault_id, key)
    SELECT ${note.id}, ${note.vaultId}, k FROM unnest(${textArray(keys)}) AS k`.execute(trx);
}

function sameSet(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}

export function graphContributor(getCap: () => number): IndexContributor<NoteModel> {
  return {
    name: 'graph-links',
    version: 1,
    async write(trx, note, model) {
      const old = await loadNode(trx, note.id);
      const nameKey = nameKeyOfPath(note.path);
      const aliases = [...new Set(model.aliases.map(aliasKey).filter(Boolean))];
      const cap = getCap();
      const links = model.links.slice(0, cap);
      const fmError = model.frontmatter.error ? `${model.frontmatter.error.code}: ${model.frontmatter.error.message}`.slice(0, 500) : null;
      await sql`
        INSERT INTO graph_nodes (note_id, vault_id, path, name_key, link_count, links_truncated, fm_error)
        VALUES (${note.id}, ${note.vaultId}, ${note.path}, ${nameKey}, ${model.links.length}, ${model.links.length > cap}, ${fmError})
        ON CONFLICT (note_id) DO UPDATE SET path = EXCLUDED.path, name_key = EXCLUDED.name_key, link_count = EXCLUDED.link_count,
          links_truncated = EXCLUDED.links_truncated, fm_error = EXCLUDED.fm_error`.execute(trx);
      if (!old || !sameSet(old.aliases, aliases)) await setAliases(trx, note, aliases);
      await sql`DELETE FROM graph_links WHERE source_id = ${note.id}`.execute(trx);
      await insertLinks(trx, note, links);
      if (!old || old.path !== note.path || !sameSet(old.aliases, aliases)) {
        await reresolve(trx, note.vaultId, {
          nameKeys: [nameKey, old?.name_key ?? ''],
          targetKeys: [...aliases, ...(old?.aliases ?? [])],
          targetId: note.id,
          excludeSource: note.id,
        });
      }
    },
    async rename(trx, note, fromPath) {
      const old = await loadNode(trx, note.id);
      if (!old) return; // never seen: the pipeline's write will follow
      const nameKey = nameKeyOfPath(note.path);
      await sql`UPDATE graph_nodes SET path = ${note.path}, name_key = ${nameKey} WHERE note_id = ${note.id}`.execute(trx);
      await reresolve(trx, note.vaultId, { nameKeys: [nameKey, old.name_key, nameKeyOfPath(fromPath)], targetKeys: old.aliases, targetId: note.id, sourceId: note.id });
    },
    async remove(trx, note) {
      const old = await loadNode(trx, note.id);
      await sql`DELETE FROM graph_links WHERE source_id = ${note.id}`.execute(trx);
      await sql`DELETE FROM graph_aliases WHERE note_id = ${note.id}`.execute(trx);
      await sql`DELETE FROM graph_nodes WHERE note_id = ${note.id}`.execute(trx);
      await reresolve(trx, note.vaultId, {
        nameKeys: [nameKeyOfPath(note.path), old?.name_key ?? ''],
        targetKeys: old?.aliases ?? [],
        targetId: note.id,
        excludeSource: note.id,
      });
    },
  };
}

