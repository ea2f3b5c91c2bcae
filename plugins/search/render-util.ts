// Small pure helpers shared by the search tools' rows and render functions. No I/O.
import { obsidianLink, type ToolContext } from '../../src/sdk/index.js';

export function quote(text: string): string {
  return JSON.stringify(text);
}

export function fixed(n: number, digits = 4): string {
  return Number.isFinite(n) ? n.toFixed(digits) : String(n);
}

/** `{ deep_link }` for a row naming this note when the vault has an Obsidian name, else nothing. */
export function withDeepLink(ctx: Pick<ToolContext, 'vault'>, path: string): { deep_link?: string } {
  const link = obsidianLink(ctx.vault, path);
  return link ? { deep_link: link } : {};
}
