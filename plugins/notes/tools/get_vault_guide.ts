// get_vault_guide: the Obsidian primer and this vault's conventions file (CLAUDE.md / AGENTS.md at its root).
// Read-only; the guide itself is built in lib/guide.ts, which the vault://guide resource shares.
import { defineTool } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';
import { loadGuide, renderGuide } from '../lib/guide.js';

export default defineTool<NotesTools['get_vault_guide']>({
  handler: (_input, ctx: NotesCtx) => loadGuide(ctx),
  render: (o) => renderGuide(o),
});
