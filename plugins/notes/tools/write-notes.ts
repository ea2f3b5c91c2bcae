// create_note, edit_note, set_frontmatter, delete_note: the note writes that climb the precondition
// ladder, answer dry runs with a diff, and report the new content_hash. Never clobber; never half-write.
import type { JsonValue } from '../../../src/markdown/index.js';
import { defineTool } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';
import { notePath } from '../lib/note-io.js';
import { checkHashSyntax, checkSize, createNote, publish, readIncumbent, removeNote, unifiedDiff } from '../lib/write-safety.js';
import { appendContent, findReplace, replaceBody, replaceSection } from '../edits/sections.js';
import { editFrontmatter } from '../edits/frontmatter.js';
import { keepLineEndings } from '../edits/line-endings.js';

/** What every single-note write answers (create_note, edit_note, set_frontmatter, replace_in_note, manage_tags share one schema shape). */
export type WriteOutput = NotesTools['edit_note']['output'];

export function renderWrite(o: WriteOutput): string {
  const head = `${o.message} — content_hash: ${o.content_hash}`;
  return o.diff !== undefined ? `${head}\n\n${o.diff === '' ? '(no changes)' : o.diff}` : head;
}

// --- create_note ------------------------------------------------------------------------------------

export const createNoteTool = defineTool<NotesTools['create_note']>({
  async handler(input, ctx: NotesCtx): Promise<WriteOutput> {
    checkHashSyntax(ctx, input.expected_hash);
    const path = notePath(ctx, input.path);
    if (input.expected_hash !== undefined) ctx.refuse('no_incumbent', { path });
    const bytes = checkSize(ctx, path, input.content);
    const r = await createNote(ctx, path, bytes);
    return { path, changed: true, dry_run: false, content_hash: r.contentHash, message: `Created note: ${path} (${r.size} bytes)` };
  },
  render: renderWrite,
});

// --- edit_note ----------------------------------------------------------------------------------------

type EditNoteInput = NotesTools['edit_note']['input'];

type Mode = 'replace' | 'append' | 'find' | 'section';

function pickMode(input: EditNoteInput, ctx: NotesCtx): Mode {
  let append = input.append === true;
  if (input.operation !== undefined) {
    if (input.operation === 'append') append = true;
    else if (input.operation !== 'replace') ctx.refuse('invalid_arguments', { problems: `operation must be "append" or "replace"` });
  }
  const chosen: Mode[] = [];
  if (append) chosen.push('append');
  if (input.find !== undefined) chosen.push('find');
  if (input.section !== undefined) chosen.push('section');
  if (input.operation === 'replace' && chosen.length > 0) ctx.refuse('invalid_arguments', { problems: `operation="replace" cannot be combined with ${chosen.join(', ')}` });
  if (chosen.length > 1) ctx.refuse('invalid_arguments', { problems: `choose at most one of append, find, section (got ${chosen.join(', ')})` });
  if (input.replace_frontmatter && chosen.length > 0) ctx.refuse('invalid_arguments', { problems: `replace_frontmatter only applies to a full replace (got ${chosen.join(', ')})` });
  return chosen[0] ?? 'replace';
}

export async function finishWrite(
  ctx: NotesCtx,
  note: { path: string; text: string; hash: string } & Parameters<typeof publish>[1],
  edited: string,
  dryRun: boolean,
  what: string,
  extra: Partial<WriteOutput> = {},
): Promise<WriteOutput> {
  // Every edit keeps the note's line-ending style (a CRLF note gets no LF lines from the edit).
  const after = keepLineEndings(note.text, edited);
  const bytes = checkSize(ctx, note.path, after);
  if (after === note.text) return { path: note.path, changed: false, dry_run: dryRun, content_hash: note.hash, ...extra, message: `No changes for ${note.path}`, ...(dryRun ? { diff: '' } : {}) };
  if (dryRun) {
    const diff = await unifiedDiff(ctx, note.path, note.text, after);
    return { path: note.path, changed: true, dry_run: true, content_hash: note.hash, ...extra, diff, message: `Dry run: ${what} would change ${note.path}; nothing was written` };
  }
  const hash = await publish(ctx, note, bytes);
  return { path: note.path, changed: true, dry_run: false, content_hash: hash, previous_hash: note.hash, ...extra, message: `${what[0].toUpperCase()}${what.slice(1)}: ${note.path}` };
}

export const editNoteTool = defineTool<NotesTools['edit_note']>({
  async handler(input, ctx: NotesCtx): Promise<WriteOutput> {
    checkHashSyntax(ctx, input.expected_hash);
    const mode = pickMode(input, ctx);
    const path = notePath(ctx, input.path);
    const note = await readIncumbent(ctx, path, input.expected_hash);
    const dry = input.dry_run === true;
    switch (mode) {
      case 'append':
        return finishWrite(ctx, note, appendContent(note, input.content), dry, 'appended to note', { mode });
      case 'find': {
        const r = findReplace(note, input.find ?? '', input.content, input.replace_all === true);
        return finishWrite(ctx, note, r.text, dry, `replaced ${r.count} occurrence(s) in note`, { mode, replacements: r.count });
      }
      case 'section': {
        const r = replaceSection(note, input.section ?? '', input.content);
        return finishWrite(ctx, note, r.text, dry, 'replaced section in note', { mode, heading: `#${r.heading.ordinal} ${r.heading.text}` });
      }
      default:
        return finishWrite(ctx, note, replaceBody(note, input.content, input.replace_frontmatter === true), dry, 'updated note', { mode: input.replace_frontmatter ? 'replace_frontmatter' : 'replace' });
    }
  },
  render: renderWrite,
});

// --- set_frontmatter ----------------------------------------------------------------------------------

export const setFrontmatterTool = defineTool<NotesTools['set_frontmatter']>({
  async handler(input, ctx: NotesCtx): Promise<WriteOutput> {
    checkHashSyntax(ctx, input.expected_hash);
    const path = notePath(ctx, input.path);
    const note = await readIncumbent(ctx, path, input.expected_hash);
    // The schema says any object; arguments arrive parsed from JSON, so every value is a JSON value.
    const r = editFrontmatter(note, (input.updates ?? {}) as Record<string, JsonValue>, input.remove ?? []);
    const parts = [r.set.length ? `set: ${r.set.join(', ')}` : '', r.removed.length ? `removed: ${r.removed.join(', ')}` : '', r.blockRemoved ? 'frontmatter block removed (last key)' : ''].filter(Boolean);
    return finishWrite(ctx, note, r.text, input.dry_run === true, `updated frontmatter (${parts.join('; ')}) in note`, { set: r.set, removed: r.removed, block_removed: r.blockRemoved });
  },
  render: renderWrite,
});

// --- delete_note --------------------------------------------------------------------------------------

export const deleteNoteTool = defineTool<NotesTools['delete_note']>({
  async handler(input, ctx: NotesCtx) {
    checkHashSyntax(ctx, input.expected_hash);
    const path = notePath(ctx, input.path);
    const note = await readIncumbent(ctx, path, input.expected_hash);
    if (input.permanent) {
      await removeNote(ctx, note, true);
      return { path, permanent: true, previous_hash: note.hash, message: `Permanently deleted: ${path}` };
    }
    const r = await removeNote(ctx, note, false);
    const trashPath = r.trashPath ?? '';
    return { path, permanent: false, trash_path: trashPath, previous_hash: note.hash, message: `Soft-deleted: ${path} → ${trashPath}` };
  },
  render: (o) => o.message,
});
