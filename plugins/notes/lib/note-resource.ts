// The vault://note/{+path} resource's live side: tell subscribed clients when a note changes (agent
// writes and outside edits alike reach the index, so an index contributor sees both), and complete note
// paths for the resource template and the prompts that take one.
import { sql } from 'kysely';
import type { CompleteValues, ContributorFactoryContext, IndexContributor, ResourceEvents, ToolContext } from '../../../src/sdk/index.js';

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
  const touched = new Set<string>();
  return {
    name: 'notes-resource-events',
    version: 1,
    observer: true,
    async write(_trx, note) {
      touched.add(note.path);
    },
    async writeMany(_trx, items) {
      for (const { note } of items) touched.add(note.path);
    },
    async remove(_trx, note) {
      touched.add(note.path);
    },
    async rename(_trx, note, fromPath) {
      touched.add(fromPath);
      touched.add(note.path);
    },
    async passEnd() {
      if (touched.size === 0 || !ctx.hasService('resource-events')) return touched.clear();
      const events = ctx.service<ResourceEvents>('resource-events');
      for (const path of touched) for (const uri of noteUris(path)) events.updated(uri);
      touched.clear();
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
