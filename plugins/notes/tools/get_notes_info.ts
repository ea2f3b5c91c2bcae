// get_notes_info: Note metadata.
// read_multiple_notes and get_notes_info: several notes per call, each entry its own success or error.
// Read-only; the batch is capped by read.maxBatch and one bad path never fails the others.
import { defineTool } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';
import { tokenCount } from '../lib/tokens.js';
import { deepLink, tagList } from '../lib/note-io.js';
import { type Entry, each } from '../lib/batch.js';

type NotesInfoOutput = NotesTools['get_notes_info']['output'];

type InfoEntry = Exclude<Entry<NotesInfoOutput>, { error: unknown }>;

export default defineTool<NotesTools['get_notes_info']>({
  async handler(input, ctx: NotesCtx) {
    // Lists are counted in the worker: a note of 50,000 tasks sends back a number, not the tasks.
    const load = { fields: ['title', 'tags', 'aliases', 'frontmatter', 'wordCount'] as const, distinctTags: true };
    const r = await each(ctx, input.paths, load, async (n): Promise<InfoEntry> => {
      const link = deepLink(ctx, n.path);
      return {
        path: n.path,
        content_hash: n.hash,
        size: n.size,
        modified: new Date(n.mtimeMs).toISOString(),
        title: n.model.title,
        tags: tagList(n.model),
        aliases: n.model.aliases,
        frontmatter_keys: Object.keys(n.model.frontmatter.data ?? {}),
        word_count: n.model.wordCount,
        headings: n.counts.outline,
        links: n.counts.links,
        tasks: n.counts.tasks,
        token_estimate: await tokenCount(ctx, n.text),
        ...(link ? { deep_link: link } : {}),
      };
    });
    return {
      notes: r.entries,
      truncated: r.truncated,
      requested: r.requested,
      max_batch: ctx.settings.notes.read.maxBatch,
    };
  },
  render(o) {
    const out = o.notes.map((e) =>
      'error' in e
        ? `- ${e.path}: error (${e.error.code}) ${e.error.message}`
        : `- ${e.path} — ${e.title} · ${e.size} B · ${e.word_count} words · ~${e.token_estimate} tokens · modified ${e.modified.slice(0, 16).replace('T', ' ')} · ${e.content_hash}${e.tags.length ? ` · tags: ${e.tags.join(', ')}` : ''}`,
    );
    if (o.truncated) out.push(`Only the first ${o.max_batch} of ${o.requested} paths were read (read.maxBatch).`);
    return out.join('\n');
  },
});
