// Deep links into the Obsidian app for results that name a note (vault.obsidianName set by the operator).
import type { VaultHandle } from './types.js';

/** `obsidian://open?vault=…&file=…` for a vault path, or undefined when the vault has no Obsidian name. */
export function obsidianLink(vault: Pick<VaultHandle, 'obsidianName'>, path: string): string | undefined {
  if (!vault.obsidianName) return undefined;
  return `obsidian://open?vault=${encodeURIComponent(vault.obsidianName)}&file=${encodeURIComponent(path.replace(/\.md$/i, ''))}`;
}
