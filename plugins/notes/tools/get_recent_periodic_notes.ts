// get_recent_periodic_notes: Recent periodic notes.
// get_periodic_note, get_recent_periodic_notes and get_vault_stats. Periodic notes follow the vault's
// plugin settings when the vault core lets us read them, else the configured defaults. Creates only on request.
import { defineTool, isRefusal, cursorPaging, offsetPager } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';
import { bodyStartByte, loadNote, sliceBytes } from '../lib/note-io.js';
import { periodicPath, periodStart } from '../lib/periodic.js';
import { periodicConfig } from '../lib/periodic-notes.js';

type RecentPeriodicOut = NotesTools['get_recent_periodic_notes']['output'];

/** How far back the periods are looked for, per granularity. */
const HORIZON = { daily: 400, weekly: 110, monthly: 60, quarterly: 24, yearly: 10 } as const;

// A page is `count` notes; the cursor is the number of periods already scanned back from now.
const pages = offsetPager('get_recent_periodic_notes', 'count');

export default defineTool<NotesTools['get_recent_periodic_notes']>({
  async handler(input, ctx: NotesCtx) {
    const cfg = await periodicConfig(ctx);
    const count = Math.min(input.count ?? 5, ctx.settings.notes.read.maxBatch);
    const horizon = HORIZON[input.granularity];
    const notes: RecentPeriodicOut['notes'] = [];
    const summary = input.summary !== false;
    const start = pages.start(ctx, input);
    let k = start;
    for (; k < horizon && notes.length < count; k++) {
      const path = periodicPath(cfg[input.granularity], periodStart(ctx.now(), input.granularity, -k));
      try {
        const note = await loadNote(ctx, path, { fields: ['frontmatter'] });
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
    return {
      granularity: input.granularity,
      notes,
      config_source: cfg.source,
      scanned_periods: k,
      next_cursor: pages.next(ctx, input, start, k - start, notes.length >= count && k < horizon),
    };
  },
  render(o) {
    if (o.notes.length === 0)
      return `No ${o.granularity} notes found in the last ${o.scanned_periods} periods (config: ${o.config_source}).`;
    const out = o.notes.map((n) => `## ${n.path} (${n.content_hash})\n${n.head ?? n.content ?? ''}`);
    if (o.next_cursor) out.push(`more: cursor=${o.next_cursor}`);
    return out.join('\n\n');
  },
  // Over the result budget a page holds fewer notes; next_cursor continues with older periods.
  paging: cursorPaging((o: RecentPeriodicOut) => o.notes.length, 'count'),
});
