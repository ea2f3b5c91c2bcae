// Periodic-note configuration for get_periodic_note and get_recent_periodic_notes: the vault's periodic-notes
// or daily-notes plugin settings when readable, else the configured defaults. Reads settings files only.
import { isRefusal } from '../../../src/sdk/index.js';
import type { Granularity, NotesCtx, PeriodicDefault } from '../settings.js';
import { mergePeriodicConfig } from './periodic.js';

/** One of Obsidian's settings files (under .obsidian/); absent, unreadable or malformed → undefined. */
export async function readJson(ctx: NotesCtx, file: string): Promise<unknown> {
  try {
    const text = await ctx.vault.fs.readAppConfig(file);
    return text === undefined ? undefined : JSON.parse(text);
  } catch (e) {
    if (isRefusal(e) || e instanceof SyntaxError) return undefined;
    throw e;
  }
}

export async function periodicConfig(
  ctx: NotesCtx,
): Promise<Record<Granularity, PeriodicDefault> & { source: string }> {
  const plugin = await readJson(ctx, 'plugins/periodic-notes/data.json');
  const core = plugin ? undefined : await readJson(ctx, 'daily-notes.json');
  return mergePeriodicConfig(ctx.settings.notes.periodic, plugin, core);
}
