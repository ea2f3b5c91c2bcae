// What the ChatGPT connector / deep-research pair (tools/search.ts, tools/fetch.ts) share: ids are vault
// paths; urls are the panel's https note view when server.publicUrl is https (obsidian:// deep links beside
// them), else obsidian:// links.
import { noteViewUrl, type ToolContext } from '../../src/sdk/index.js';
import type { SearchSettingsSection } from './settings.js';

/** `obsidian://open?vault=<name>&file=<path>`: opens the note in the owner's Obsidian app. */
export function noteUrl(vaultName: string, path: string): string {
  return `obsidian://open?vault=${encodeURIComponent(vaultName)}&file=${encodeURIComponent(path)}`;
}

/** url: the panel's note view when the server is public over https (obsidian_url beside it), else obsidian://. */
export function urlsOf(
  ctx: ToolContext<SearchSettingsSection>,
  vault: string,
  path: string,
): { url: string; obsidian_url?: string } {
  const obsidian = noteUrl(vault, path);
  const view = noteViewUrl(ctx.server.publicUrl, path);
  return view ? { url: view, obsidian_url: obsidian } : { url: obsidian };
}

export function vaultName(ctx: ToolContext<SearchSettingsSection>): string {
  return ctx.settings.search.connector.vaultName || ctx.vault.name;
}
