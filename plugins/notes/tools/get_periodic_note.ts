// get_periodic_note: Periodic note.
// get_periodic_note, get_recent_periodic_notes and get_vault_stats. Periodic notes follow the vault's
// plugin settings when the vault core lets us read them, else the configured defaults. Creates only on request.
import { defineTool, isRefusal } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';
import { tokenCount } from '../lib/tokens.js';
import { createNote } from '../lib/write-safety.js';
import { bodyStartByte, deepLink, loadNote, sliceBytes } from '../lib/note-io.js';
import { periodicPath, periodStart } from '../lib/periodic.js';
import { periodicConfig } from '../lib/periodic-notes.js';

export default defineTool<NotesTools['get_periodic_note']>({
  async handler(input, ctx: NotesCtx) {
    const cfg = await periodicConfig(ctx);
    const path = ctx.vault.fs.checkPath(
      periodicPath(cfg[input.granularity], periodStart(ctx.now(), input.granularity, input.offset ?? 0)),
    );
    const link = deepLink(ctx, path);
    const base = {
      granularity: input.granularity,
      path,
      config_source: cfg.source,
      ...(link ? { deep_link: link } : {}),
    };
    let created = false;
    if (!(await ctx.vault.fs.exists(path))) {
      if (!input.create_if_missing) return { ...base, exists: false, created: false };
      // A call that asks to create was admitted as a write by the host (writesOnlyWith: create_if_missing).
      try {
        await createNote(ctx, path, Buffer.alloc(0));
        created = true;
      } catch (e) {
        if (!(isRefusal(e) && e.code === 'already_exists')) throw e;
      }
    }
    const note = await loadNote(ctx, path, { fields: ['frontmatter'] });
    const body = sliceBytes(note.bytes, bodyStartByte(note));
    const max = ctx.settings.notes.read.maxChars;
    return {
      ...base,
      exists: true,
      created,
      content_hash: note.hash,
      content: body.slice(0, max),
      truncated: body.length > max,
      token_estimate: await tokenCount(ctx, body.slice(0, max)),
    };
  },
  render(o) {
    if (!o.exists)
      return `No ${o.granularity} note at ${o.path} (config: ${o.config_source}). Pass create_if_missing=true to create it.`;
    return `${o.created ? 'Created' : o.granularity} note ${o.path} — content_hash: ${o.content_hash}${o.truncated ? ' (truncated; use read_note for the rest)' : ''}\n\n${o.content}`;
  },
});
