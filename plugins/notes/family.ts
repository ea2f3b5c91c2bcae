// The notes family: read, navigate and write notes without ever clobbering one. Wires tools, settings,
// resources and prompts; the logic lives in tools/, edits/ and lib/. Never touches bytes outside ctx.vault.fs.
import { defineFamily, defineTool, INDEX, NOTE_WRITER, optional } from '../../src/sdk/index.js';
import type { NotesTools } from '../../src/generated/notes/index.js';
import { notesSettingsSchema, type NotesCtx } from './settings.js';
import { readNoteTool, readNote, renderReadNote } from './tools/read-note.js';
import { getNotesInfoTool, readMultipleNotesTool } from './tools/batch-reads.js';
import { getNoteOutlineTool, readNoteLinesTool } from './tools/outline-lines.js';
import { createNoteTool, deleteNoteTool, editNoteTool, setFrontmatterTool } from './tools/write-notes.js';
import { moveNoteTool } from './tools/move-note.js';
import { getRecentTool, listNotesTool } from './tools/listings.js';
import { getPeriodicNoteTool, getRecentPeriodicNotesTool, getVaultStatsTool } from './tools/periodic-stats.js';
import { manageTagsTool, renameTagTool, replaceInNoteTool } from './tools/tag-replace.js';
import { loadGuide, renderGuide } from './lib/guide.js';
import { notesPrompts } from './prompts.js';
import { completeNotePath, noteResourceEvents } from './lib/note-resource.js';
import { createNoteWriter } from './lib/note-writer.js';
import { notesRefusals } from './refusals.js';

export default defineFamily<NotesTools>({
  name: 'notes',
  refusals: notesRefusals,
  description: 'Read, navigate and safely write Markdown notes',
  requires: [optional(INDEX)],
  // The one note-write path, for every family that writes notes (tasks, history, third parties).
  provides: { [NOTE_WRITER.id]: { create: createNoteWriter } },
  schemas: new URL('../../schemas/notes/', import.meta.url),
  settings: { notes: notesSettingsSchema },
  tools: {
    get_vault_guide: defineTool<NotesTools['get_vault_guide']>({ handler: (_input, ctx: NotesCtx) => loadGuide(ctx), render: (o) => renderGuide(o) }),
    read_note: readNoteTool,
    read_multiple_notes: readMultipleNotesTool,
    get_notes_info: getNotesInfoTool,
    get_note_outline: getNoteOutlineTool,
    read_note_lines: readNoteLinesTool,
    create_note: createNoteTool,
    edit_note: editNoteTool,
    set_frontmatter: setFrontmatterTool,
    delete_note: deleteNoteTool,
    move_note: moveNoteTool,
    replace_in_note: replaceInNoteTool,
    manage_tags: manageTagsTool,
    rename_tag: renameTagTool,
    list_notes: listNotesTool,
    get_recent: getRecentTool,
    get_periodic_note: getPeriodicNoteTool,
    get_recent_periodic_notes: getRecentPeriodicNotesTool,
    get_vault_stats: getVaultStatsTool,
  },
  resources: [
    {
      uri: 'vault://guide',
      name: 'guide',
      title: 'Vault guide',
      description: 'The Obsidian primer and the vault conventions file (same as get_vault_guide).',
      mimeType: 'text/markdown',
      read: async (uri, _params, ctx) => [{ uri, mimeType: 'text/markdown', text: renderGuide(await loadGuide(ctx as NotesCtx)) }],
    },
    {
      uriTemplate: 'vault://note/{+path}',
      name: 'note',
      title: 'Note',
      description: 'A read-only view of one note (same as read_note without a section). Subscribers hear when it changes.',
      mimeType: 'text/markdown',
      complete: { path: completeNotePath },
      read: async (uri, params, ctx) => [{ uri, mimeType: 'text/markdown', text: renderReadNote(await readNote({ path: decodeURIComponent(params.path) }, ctx as NotesCtx)) }],
    },
  ],
  prompts: notesPrompts,
  indexers: (ctx) => [noteResourceEvents(ctx)],
});
