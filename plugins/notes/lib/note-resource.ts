// The vault://note/{+path} resource's live side: tell subscribed clients when a note changes (agent
// writes and outside edits alike reach the index, so an index contributor sees both), and complete note
// paths for the resource template and the prompts that take one.
import { sql } from 'kysely';
import {
  RESOURCE_EVENTS,
  type CompleteValues,
  type ContributorFactoryContext,
  type IndexContributor,
  type ToolContext,
} from '../../../src/sdk/index.js';

export const NOTE_URI_PREFIX = 'vault://note/';

/** The URIs a client may hold for a note: as the template expands it (`{+path}` keeps `/`), and raw. */
export function noteUris(path: string): string[] {
  const expanded = NOTE_URI_PREFIX + encodeURI(path);
  const raw = NOTE_URI_PREFIX + path;
  return expanded === raw ? [raw] : [expanded, raw];
}

/**
 * A contributor that writes nothing: it remembers which notes a pass touched and, once the pass has
 * committed, tells 'resource-events' so subscribers re-read a note that is already there.
 */
export function noteResourceEvents(ctx: ContributorFactoryContext): IndexContributor {
  // Per vault: each vault's pipeline ends its own passes, and tells only its own subscribers.
  const touchedByVault = new Map<number, Set<string>>();
  const touch = (vaultId: number, path: string) => {
    let set = touchedByVault.get(vaultId);
    if (!set) touchedByVault.set(vaultId, (set = new Set()));
    set.add(path);
  };
  return {
    name: 'notes-resource-events',
    version: 1,
    observer: true,
    async write(_trx, note) {
      touch(note.vaultId, note.path);
    },
    async writeMany(_trx, items) {
      for (const { note } of items) touch(note.vaultId, note.path);
    },
    async remove(_trx, note) {
      touch(note.vaultId, note.path);
    },
    async removeMany(_trx, notes) {
      for (const note of notes) touch(note.vaultId, note.path);
    },
    async rename(_trx, note, fromPath) {
      touch(note.vaultId, fromPath);
      touch(note.vaultId, note.path);
    },
    async passEnd(_db, pass) {
      const touched = touchedByVault.get(pass.vaultId);
      touchedByVault.delete(pass.vaultId);
      if (!touched?.size || !ctx.hasService(RESOURCE_EVENTS)) return;
      const events = ctx.service(RESOURCE_EVENTS);
      for (const path of touched) for (const uri of noteUris(path)) events.updated(uri, pass.vaultId);
    },
  };
}

/** How many paths one completion looks at (the host sends at most 100). */
const COMPLETION_LIMIT = 100;

/**
 * Note paths for `completion/complete`: those starting with what was typed first, then those containing
 * it anywhere (case-insensitive), each group most recently changed first.
 */
export const completeNotePath: CompleteValues = async (value, _context, ctx: ToolContext) => {
  const typed = value.normalize('NFC').toLowerCase();
  const like = `%${typed.replace(/[\\%_]/g, '\\$&')}%`;
  const prefix = `${typed.replace(/[\\%_]/g, '\\$&')}%`;
  const rows = await sql<{ path: string }>`
    SELECT path FROM notes
    WHERE vault_id = ${ctx.principal.vaultId} AND lower(path) LIKE ${like}
    ORDER BY (lower(path) LIKE ${prefix}) DESC, mtime DESC
    LIMIT ${COMPLETION_LIMIT + 1}`.execute(ctx.db);
  return rows.rows.map((r) => r.path);
};
