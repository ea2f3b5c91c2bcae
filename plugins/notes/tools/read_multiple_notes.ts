// read_multiple_notes: Read several notes in one call.
// read_multiple_notes and get_notes_info: several notes per call, each entry its own success or error.
// Read-only; the batch is capped by read.maxBatch and one bad path never fails the others.
import { defineTool } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';
import { tokenCount } from '../lib/tokens.js';
import { bodyStartByte, deepLink, sliceBytes, tagList } from '../lib/note-io.js';
import { type Entry, type ReadMultipleOutput, each } from '../lib/batch.js';

type MultiEntry = Exclude<Entry<ReadMultipleOutput>, { error: unknown }>;

export default defineTool<NotesTools['read_multiple_notes']>({
  async handler(input, ctx: NotesCtx) {
    const s = ctx.settings.notes.read;
    const share = Math.max(200, Math.floor(s.maxChars / Math.max(1, Math.min(input.paths.length, s.maxBatch))));
    const perNote = Math.min(input.max_chars ?? share, share);
    const headChars = Math.min(input.head_chars ?? s.headChars, perNote);
    const load = { fields: ['title', 'tags', 'frontmatter'] as const, distinctTags: true };
    const r = await each(ctx, input.paths, load, async (n): Promise<MultiEntry> => {
      const body = sliceBytes(n.bytes, bodyStartByte(n));
      const limit = input.summary ? headChars : perNote;
      const text = body.slice(0, limit);
      const link = deepLink(ctx, n.path);
      return {
        path: n.path,
        content_hash: n.hash,
        title: n.model.title,
        tags: tagList(n.model),
        ...(input.summary ? { head: text } : { content: text }),
        truncated: body.length > limit,
        total_chars: body.length,
        token_estimate: await tokenCount(ctx, text),
        ...(link ? { deep_link: link } : {}),
      };
    });
    return { notes: r.entries, truncated: r.truncated, requested: r.requested, max_batch: s.maxBatch };
  },
  render(o) {
    const out: string[] = [];
    for (const e of o.notes) {
      if ('error' in e) {
        out.push(`## ${e.path}`, `error (${e.error.code}): ${e.error.message}`, '');
        continue;
      }
      out.push(
        `## ${e.path}`,
        `content_hash: ${e.content_hash}${e.tags.length ? ` · tags: ${e.tags.join(', ')}` : ''} · ${e.total_chars} chars${e.truncated ? ' (truncated; read_note for the rest)' : ''}`,
        '',
        e.content ?? e.head ?? '',
        '',
      );
    }
    if (o.truncated) out.push(`Only the first ${o.max_batch} of ${o.requested} paths were read (read.maxBatch).`);
    return out.join('\n');
  },
  // Over the result budget every body is cut shorter; each cut entry says read_note reads the rest.
  paging: {
    limit: 'max_chars',
    size: (o) => Math.max(0, ...o.notes.map((e) => ('error' in e ? 0 : (e.content ?? e.head ?? '').length))),
    next: () => undefined,
  },
});
