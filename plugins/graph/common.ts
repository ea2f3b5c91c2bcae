// Shared helpers of the graph family: settings type, name keys, note lookup, the orphan predicate.
// (Folder scope, limits and SQL arrays are the SDK's: src/sdk/query.)
// Pure helpers and read-only lookups; never writes rows and never reads vault bytes.
import { sql, type RawBuilder } from 'kysely';
import { type Database, type DatabaseTransaction, type ToolContext, resolveNotePath } from '../../src/sdk/index.js';
import type { GraphSettings } from '../../src/generated/graph/settings.js';

// The section's shape is generated from its schema below (npm run gen): the two cannot drift.
export type { GraphSettings };

export type GraphCtx = ToolContext<{ graph: GraphSettings }>;

export const GRAPH_SETTINGS_SCHEMA = {
  type: 'object',
  properties: {
    maxLinksPerNote: {
      type: 'integer',
      minimum: 1,
      default: 5000,
      description: 'Links stored per note; the rest are dropped and the note is marked truncated.',
    },
    backlinksCap: {
      type: 'integer',
      minimum: 1,
      default: 500,
      description: 'Most rows get_backlinks returns (a larger limit is lowered to this).',
    },
    linksCap: { type: 'integer', minimum: 1, default: 500, description: 'Most rows get_links returns.' },
    neighborhoodMaxDepth: {
      type: 'integer',
      minimum: 1,
      maximum: 10,
      default: 5,
      description: 'Deepest walk get_neighborhood makes.',
    },
    neighborhoodCap: { type: 'integer', minimum: 1, default: 200, description: 'Most notes get_neighborhood returns.' },
    orphansCap: { type: 'integer', minimum: 1, default: 500, description: 'Most rows find_orphans returns.' },
    relatedCap: {
      type: 'integer',
      minimum: 1,
      default: 50,
      description: 'Most notes find_related ranks: its answer, paged by the cursor.',
    },
    auditCapPerClass: { type: 'integer', minimum: 1, default: 200, description: 'Most items per audit_notes class.' },
    linkTextChars: {
      type: 'integer',
      minimum: 20,
      default: 120,
      description: 'Link text in results is clipped to this many characters.',
    },
  },
} as const;

/** Lower-cased basename without a trailing `.md`: the key links are matched against. */
export function nameKeyOfPath(path: string): string {
  return stripMd(path.slice(path.lastIndexOf('/') + 1).toLowerCase());
}

/** The same key computed from a link target (`Folder/Note`, `note.md`, `Note`). */
export function nameKeyOfTarget(target: string): string {
  const t = target.trim().replace(/\\/g, '/');
  return stripMd(t.slice(t.lastIndexOf('/') + 1).toLowerCase());
}

/** The whole target lower-cased, as alias matching sees it. */
export function targetKeyOf(target: string): string {
  return target.trim().replace(/\\/g, '/').toLowerCase();
}

export function aliasKey(alias: string): string {
  return alias.trim().toLowerCase();
}

function stripMd(s: string): string {
  return s.endsWith('.md') ? s.slice(0, -3) : s;
}

/**
 * A target naming a file by an extension other than `.md` (`img.png`, `Books.base`, `v1.2`): when no note
 * answers it, the tools look it up among the vault's files (vault-files.ts) to tell attachment from dangling.
 */
export function isAttachmentTarget(target: string): boolean {
  const t = target.trim();
  const name = t.slice(t.lastIndexOf('/') + 1);
  return /\.[^.\s]{1,16}$/.test(name) && !/\.md$/i.test(name);
}

export interface NoteRef {
  id: number;
  path: string;
  title: string;
}

/** The indexed note at `path` (also tried with `.md` appended), or a `not_found` refusal. */
export async function findNote(ctx: GraphCtx | ToolContext<unknown>, path: string): Promise<NoteRef> {
  const resolved = await resolveNotePath(ctx, path);
  const { rows } = await sql<{ id: string | number; path: string; title: string }>`
    SELECT id, path, title FROM notes WHERE vault_id = ${ctx.vault.id} AND path = ${resolved}`.execute(ctx.db);
  if (rows.length === 0) ctx.refuse('not_found', { path });
  return { id: Number(rows[0].id), path: rows[0].path, title: rows[0].title };
}

export function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

export type Executor = Database | DatabaseTransaction;

/**
 * SQL: note `n` (joined to its graph node `g`) has no link in or out. Resolved links count, self-links do not;
 * an ambiguous link counts for its source and for every candidate, so no note a link may mean is called an orphan.
 */
export function isOrphan(): RawBuilder<unknown> {
  return sql`NOT EXISTS (SELECT 1 FROM graph_links o WHERE o.source_id = n.id AND ((o.target_id IS NOT NULL AND o.target_id <> n.id) OR o.ambiguous))
    AND NOT EXISTS (SELECT 1 FROM graph_links i WHERE i.target_id = n.id AND i.source_id <> n.id)
    AND NOT EXISTS (SELECT 1 FROM graph_links a WHERE a.vault_id = n.vault_id AND a.name_key = g.name_key AND a.ambiguous
      AND a.source_id <> n.id AND a.candidates @> jsonb_build_array(n.path))`;
}

/** How many notes of the vault the graph contributor has not seen yet (so empty answers are never silent). */
export async function pendingNotes(db: Executor, vaultId: number): Promise<number> {
  const { rows } = await sql<{ n: string | number }>`
    SELECT count(*) AS n FROM notes n WHERE n.vault_id = ${vaultId}
      AND NOT EXISTS (SELECT 1 FROM graph_nodes g WHERE g.note_id = n.id)`.execute(db);
  return Number(rows[0]?.n ?? 0);
}
