// Whole-vault scans for tools that must see every note (link rewriting, tag renames, stats without an
// index): file list plus each note's text, read with bounded concurrency. Never writes.
import { parseNoteBounded } from './note-io.js';
import { isRefusal, mapLimit } from '../../../src/sdk/index.js';
import type { NotesCtx } from '../settings.js';

export interface ScannedNote {
  path: string;
  text: string;
  lower: string;
  aliases: string[];
  size: number;
  mtimeMs: number;
}

/** Every file path (for link resolution) and every readable note's text; unreadable notes are skipped. */
export async function readAllNotes(
  ctx: NotesCtx,
): Promise<{ files: string[]; notes: ScannedNote[]; skipped: string[] }> {
  const files: string[] = [];
  const md: Array<{ path: string; size: number; mtimeMs: number }> = [];
  for await (const e of ctx.vault.fs.walk()) {
    if (ctx.signal.aborted) break;
    if (e.kind !== 'file') continue;
    files.push(e.path);
    if (/\.md$/i.test(e.path)) md.push({ path: e.path, size: e.size, mtimeMs: e.mtimeMs });
  }
  const skipped: string[] = [];
  const max = ctx.settings.notes.write.maxNoteBytes;
  const read = await mapLimit(md, 16, async (f) => {
    try {
      const text = await ctx.vault.fs.readText(f.path, { maxBytes: max });
      const aliases =
        text.startsWith('---') && /alias/i.test(text.slice(0, 8192))
          ? (await parseNoteBounded(ctx, f.path, text)).aliases
          : [];
      return { path: f.path, text, lower: text.toLowerCase(), aliases, size: f.size, mtimeMs: f.mtimeMs };
    } catch (e) {
      if (!isRefusal(e)) throw e;
      skipped.push(f.path);
      return null;
    }
  });
  return { files, notes: read.filter((n): n is ScannedNote => n !== null), skipped };
}
