// The notes family: read, navigate and write notes without ever clobbering one. Wires tools, settings,
// resources and prompts; the logic lives in tools/, edits/ and lib/. Never touches bytes outside ctx.vault.fs.
import { defineFamily, INDEX, NOTE_WRITER, optional } from '../../src/sdk/index.js';
import type { NotesTools } from '../../src/generated/notes/index.js';
import { notesSettingsSchema, type NotesCtx } from './settings.js';
import getVaultGuideTool from './tools/get_vault_guide.js';
import readNoteTool from './tools/read_note.js';
import { readNote, renderReadNote } from './tools/read_note.js';
import getNotesInfoTool from './tools/get_notes_info.js';
import readMultipleNotesTool from './tools/read_multiple_notes.js';
import getNoteOutlineTool from './tools/get_note_outline.js';
import readNoteLinesTool from './tools/read_note_lines.js';
import createNoteTool from './tools/create_note.js';
import deleteNoteTool from './tools/delete_note.js';
import editNoteTool from './tools/edit_note.js';
import setFrontmatterTool from './tools/set_frontmatter.js';
import moveNoteTool from './tools/move_note.js';
import getRecentTool from './tools/get_recent.js';
import listNotesTool from './tools/list_notes.js';
import getPeriodicNoteTool from './tools/get_periodic_note.js';
import getRecentPeriodicNotesTool from './tools/get_recent_periodic_notes.js';
import getVaultStatsTool from './tools/get_vault_stats.js';
import manageTagsTool from './tools/manage_tags.js';
import renameTagTool from './tools/rename_tag.js';
import replaceInNoteTool from './tools/replace_in_note.js';
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
    get_vault_guide: getVaultGuideTool,
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
      read: async (uri, _params, ctx) => [
        { uri, mimeType: 'text/markdown', text: renderGuide(await loadGuide(ctx as NotesCtx)) },
      ],
    },
    {
      uriTemplate: 'vault://note/{+path}',
      name: 'note',
      title: 'Note',
      description:
        'A read-only view of one note (same as read_note without a section). Subscribers hear when it changes.',
      mimeType: 'text/markdown',
      complete: { path: completeNotePath },
      read: async (uri, params, ctx) => [
        {
          uri,
          mimeType: 'text/markdown',
          text: renderReadNote(await readNote({ path: decodeURIComponent(params.path) }, ctx as NotesCtx)),
        },
      ],
    },
  ],
  prompts: notesPrompts,
  indexers: (ctx) => [noteResourceEvents(ctx)],
});
