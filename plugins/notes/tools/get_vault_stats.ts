// get_vault_stats: Vault statistics.
// get_periodic_note, get_recent_periodic_notes and get_vault_stats. Periodic notes follow the vault's
// plugin settings when the vault core lets us read them, else the configured defaults. Creates only on request.
import { defineTool } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';
import { indexService } from '../lib/write-safety.js';
import { parseNoteBounded } from '../lib/note-io.js';
import { readAllNotes } from '../lib/vault-scan.js';

export default defineTool<NotesTools['get_vault_stats']>({
  async handler(_input, ctx: NotesCtx) {
    const idx = indexService(ctx);
    const st = idx?.status(ctx.principal.vaultId);
    const all = await readAllNotes(ctx);
    const folders = new Set<string>();
    let bytes = 0;
    for (const f of all.files) {
      const i = f.lastIndexOf('/');
      if (i > 0) folders.add(f.slice(0, i));
    }
    let words = 0,
      links = 0,
      tasks = 0,
      open = 0;
    const tags = new Set<string>();
    for (const n of all.notes) {
      bytes += n.size;
      const m = await parseNoteBounded(ctx, n.path, n.text);
      words += m.wordCount;
      links += m.links.length;
      tasks += m.tasks.length;
      open += m.tasks.filter((t) => t.statusType === 'todo' || t.statusType === 'in_progress').length;
      for (const t of m.tags) tags.add(t.tag);
    }
    return {
      notes: all.notes.length + all.skipped.length,
      attachments: all.files.length - all.notes.length - all.skipped.length,
      folders: folders.size,
      bytes,
      words,
      tags: tags.size,
      links,
      tasks,
      open_tasks: open,
      index: st
        ? {
            available: true,
            ready: st.ready,
            indexed: st.indexed,
            scanned: st.scanned,
            pending: st.pending,
            quarantined: st.quarantined,
            last_pass_at: st.lastPassAt,
          }
        : { available: false },
      ...(all.skipped.length
        ? {
            notice: `${all.skipped.length} notes could not be read (not UTF-8 or over the size cap) and are counted without their contents.`,
          }
        : {}),
    };
  },
  render(o) {
    const idx = o.index.available
      ? `index: ${o.index.ready ? 'ready' : 'catching up'}, ${o.index.indexed}/${o.index.scanned} indexed, ${o.index.pending} pending, ${o.index.quarantined} quarantined`
      : 'index: not available';
    return [
      `notes: ${o.notes}`,
      `attachments: ${o.attachments}`,
      `folders: ${o.folders}`,
      `note bytes: ${o.bytes}`,
      `words: ${o.words}`,
      `distinct tags: ${o.tags}`,
      `links: ${o.links}`,
      `tasks: ${o.tasks} (${o.open_tasks} open)`,
      idx,
      ...(o.notice ? [o.notice] : []),
    ].join('\n');
  },
});
