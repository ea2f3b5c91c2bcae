// get_recent_periodic_notes: Recent periodic notes.
// get_periodic_note, get_recent_periodic_notes and get_vault_stats. Periodic notes follow the vault's
// plugin settings when the vault core lets us read them, else the configured defaults. Creates only on request.
import { defineTool, isRefusal } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';
import { bodyStartByte, loadNote, sliceBytes } from '../lib/note-io.js';
import { periodicPath, periodStart } from '../lib/periodic.js';
import { periodicConfig } from '../lib/periodic-notes.js';

type RecentPeriodicOut = NotesTools['get_recent_periodic_notes']['output'];

export default defineTool<NotesTools['get_recent_periodic_notes']>({
  async handler(input, ctx: NotesCtx) {
    const cfg = await periodicConfig(ctx);
    const count = Math.min(input.count ?? 5, ctx.settings.notes.read.maxBatch);
    const horizon = { daily: 400, weekly: 110, monthly: 60, quarterly: 24, yearly: 10 }[input.granularity];
    const notes: RecentPeriodicOut['notes'] = [];
    const summary = input.summary !== false;
    let k = 0;
    for (; k < horizon && notes.length < count; k++) {
      const path = periodicPath(cfg[input.granularity], periodStart(ctx.now(), input.granularity, -k));
      try {
        const note = await loadNote(ctx, path);
        const body = sliceBytes(note.bytes, bodyStartByte(note));
        notes.push({
          path,
          content_hash: note.hash,
          ...(summary
            ? { head: body.slice(0, ctx.settings.notes.read.headChars) }
            : { content: body.slice(0, Math.floor(ctx.settings.notes.read.maxChars / count)) }),
        });
      } catch (e) {
        if (!isRefusal(e)) throw e;
      }
    }
    return { granularity: input.granularity, notes, config_source: cfg.source, scanned_periods: k };
  },
  render(o) {
    if (o.notes.length === 0)
      return `No ${o.granularity} notes found in the last ${o.scanned_periods} periods (config: ${o.config_source}).`;
    return o.notes.map((n) => `## ${n.path} (${n.content_hash})\n${n.head ?? n.content ?? ''}`).join('\n\n');
  },
});
