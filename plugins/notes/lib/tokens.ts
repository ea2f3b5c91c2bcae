// cl100k token counts for read results, computed in the worker pool (the encoder is slow JavaScript
// and must never hold the event loop). One pool round trip per call, however many texts.
import type { NotesCtx } from '../settings.js';

export async function tokenCounts(ctx: NotesCtx, texts: readonly string[]): Promise<number[]> {
  if (texts.length === 0) return [];
  return ctx.workers.run<number[]>('count-tokens', { texts }, { signal: ctx.signal });
}

export async function tokenCount(ctx: NotesCtx, text: string): Promise<number> {
  return (await tokenCounts(ctx, [text]))[0];
}
