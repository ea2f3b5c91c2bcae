// The keyword rows of a write-through land in a second transaction right after the note's own (the
// keyword contributor is `deferred`), so every read of them for a caller waits for the index to settle:
// a search never misses what the caller's last write returned.
import { INDEX, type ToolContext } from '../../src/sdk/index.js';

export async function indexSettled(ctx: Pick<ToolContext, 'hasService' | 'service' | 'vault'>): Promise<void> {
  if (ctx.hasService(INDEX)) await ctx.service(INDEX).settled(ctx.vault.id);
}
