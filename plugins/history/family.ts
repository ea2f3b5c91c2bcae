// The history family: keeps the prior version of every note or file a tool replaces, moves or removes
// (through the SDK's write observers, no host special case), and tools to list, read, diff, restore
// and undo them. Writes the vault only through the notes family's note-writer service.
import { defineFamily, NOTE_WRITER, optional } from '../../src/sdk/index.js';
import type { HistoryTools } from '../../src/generated/history/index.js';
import { historyMigrations } from './migrations.js';
import { HISTORY, historyObservers, historyProvider, historySettings, pinnedVersions } from './recorder.js';
import { historySettingsSchema } from './settings.js';
import { historyRefusals } from './refusals.js';
import { blob, listRevisions as rows, prune, storeSize } from './store.js';
import diffRevisions from './tools/diff_revisions.js';
import listDeletedNotes from './tools/list_deleted_notes.js';
import listRevisions from './tools/list_revisions.js';
import readRevision from './tools/read_revision.js';
import restoreRevision from './tools/restore_revision.js';
import undoChanges from './tools/undo_changes.js';

export default defineFamily<HistoryTools>({
  name: 'history',
  description: 'Every change agents make is kept as a revision: list, read, diff, restore and undo them.',
  requires: [optional(NOTE_WRITER)],
  refusals: historyRefusals,
  provides: { [HISTORY.id]: historyProvider },
  schemas: new URL('../../schemas/history/', import.meta.url),
  settings: { history: historySettingsSchema },
  migrations: historyMigrations,
  writeObservers: historyObservers,
  tools: {
    list_revisions: listRevisions,
    read_revision: readRevision,
    diff_revisions: diffRevisions,
    restore_revision: restoreRevision,
    undo_changes: undoChanges,
    list_deleted_notes: listDeletedNotes,
  },
  async health(ctx) {
    const size = await ctx.service(HISTORY).size(ctx.vaultId);
    return { recording: true, revisions: size.revisions, versions: size.versions, store_bytes: size.bytes };
  },
  commands: {
    prune: {
      description: 'Prune revisions past history.retentionDays and history.maxStoreBytes now.',
      async run(ctx) {
        const s = historySettings(ctx.settings);
        const r = await prune(ctx.db, s.retentionDays, s.maxStoreBytes, undefined, { spare: pinnedVersions() });
        const size = await storeSize(ctx.db);
        ctx.print(
          `pruned ${r.revisions} revision(s) and ${r.versions} version(s); ${size.revisions} revision(s), ${size.bytes} bytes kept`,
        );
      },
    },
    export: {
      description:
        "Print one note's history as JSON lines on stderr (newest first, content base64; the command channel carries lines only): exocortex history export <path>.",
      async run(ctx) {
        const path = ctx.args[0];
        if (!path) throw new Error('usage: exocortex history export <path>');
        let before: number | null = null;
        for (;;) {
          const page = await rows(ctx.db, ctx.vault.id, path, 500, before);
          for (const r of page) {
            const bytes = r.hash ? await blob(ctx.db, ctx.vault.id, r.hash) : undefined;
            ctx.print(
              JSON.stringify({
                ...r,
                id: `rev-${r.id}`,
                at: new Date(r.at).toISOString(),
                content: bytes?.toString('base64') ?? null,
              }),
            );
          }
          if (page.length < 500) break;
          before = Number(page[page.length - 1].id);
        }
      },
    },
  },
});
