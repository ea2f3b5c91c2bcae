// The welcome note: what an empty vault gets on its first start (never written over a note, never in a
// read-only vault), so the operator sees at once that the folder is served and how agents will use it.
import type { Logger } from '../sdk/types.js';
import type { VaultFs } from '../sdk/vault.js';

export const WELCOME_NOTE = `# Welcome to your vault

This folder is served by Exocortex, so AI agents you connect can read, search and carefully
edit these notes with you.

- Link notes with \`[[Welcome]]\`-style wikilinks; tag them with \`#tags\`.
- Write a \`CLAUDE.md\` (or \`AGENTS.md\`) here to tell agents how this vault is organised.
- Deleted notes go to \`.trash/\`, and no write replaces a note it has not checked.
`;

/** Write Welcome.md into an empty vault (one the listing shows nothing in); a race with another writer is fine. */
export async function seedWelcomeNote(fs: VaultFs, log: Logger): Promise<void> {
  const entries = await fs.list('', { limit: 1 });
  if (entries.length > 0) return;
  try {
    await fs.create('Welcome.md', Buffer.from(WELCOME_NOTE));
    log.info('created Welcome.md in the empty vault');
  } catch {
    // Someone created it meanwhile; nothing to do.
  }
}
