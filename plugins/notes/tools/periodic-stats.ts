// get_periodic_note, get_recent_periodic_notes and get_vault_stats. Periodic notes follow the vault's
// plugin settings when the vault core lets us read them, else the configured defaults. Creates only on request.
import { defineTool, isRefusal } from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { Granularity, NotesCtx, PeriodicDefault } from '../settings.js';
import { tokenCount } from '../lib/tokens.js';
import { createNote, indexService } from '../lib/write-safety.js';
import { bodyStartByte, deepLink, loadNote, parseNoteBounded, sliceBytes } from '../lib/note-io.js';
import { mergePeriodicConfig, periodicPath, periodStart } from '../lib/periodic.js';
import { readAllNotes } from '../lib/vault-scan.js';

/** One of Obsidian's settings files (under .obsidian/); absent, unreadable or malformed → undefined. */
async function readJson(ctx: NotesCtx, file: string): Promise<unknown> {
  try {
    const text = await ctx.vault.fs.readAppConfig(file);
    return text === undefined ? undefined : JSON.parse(text);
  } catch (e) {
    if (isRefusal(e) || e instanceof SyntaxError) return undefined;
    throw e;
  }
}

async function periodicConfig(ctx: NotesCtx): Promise<Record<Granularity, PeriodicDefault> & { source: string }> {
  const plugin = await readJson(ctx, 'plugins/periodic-notes/data.json');
  const core = plugin ? undefined : await readJson(ctx, 'daily-notes.json');
  return mergePeriodicConfig(ctx.settings.notes.periodic, plugin, core);
}

export const getPeriodicNoteTool = defineTool<NotesTools['get_periodic_note']>({
  async handler(input, ctx: NotesCtx) {
    const cfg = await periodicConfig(ctx);
    const path = ctx.vault.fs.checkPath(periodicPath(cfg[input.granularity], periodStart(ctx.now(), input.granularity, input.offset ?? 0)));
    const link = deepLink(ctx, path);
    const base = { granularity: input.granularity, path, config_source: cfg.source, ...(link ? { deep_link: link } : {}) };
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
    const note = await loadNote(ctx, path);
    const body = sliceBytes(note.bytes, bodyStartByte(note));
    const max = ctx.settings.notes.read.maxChars;
    return { ...base, exists: true, created, content_hash: note.hash, content: body.slice(0, max), truncated: body.length > max, token_estimate: await tokenCount(ctx, body.slice(0, max)) };
  },
  render(o) {
    if (!o.exists) return `No ${o.granularity} note at ${o.path} (config: ${o.config_source}). Pass create_if_missing=true to create it.`;
    return `${o.created ? 'Created' : o.granularity} note ${o.path} — content_hash: ${o.content_hash}${o.truncated ? ' (truncated; use read_note for the rest)' : ''}\n\n${o.content}`;
  },
});

type RecentPeriodicOut = NotesTools['get_recent_periodic_notes']['output'];

export const getRecentPeriodicNotesTool = defineTool<NotesTools['get_recent_periodic_notes']>({
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
        notes.push({ path, content_hash: note.hash, ...(summary ? { head: body.slice(0, ctx.settings.notes.read.headChars) } : { content: body.slice(0, Math.floor(ctx.settings.notes.read.maxChars / count)) }) });
      } catch (e) {
        if (!isRefusal(e)) throw e;
      }
    }
    return { granularity: input.granularity, notes, config_source: cfg.source, scanned_periods: k };
  },
  render(o) {
    if (o.notes.length === 0) return `No ${o.granularity} notes found in the last ${o.scanned_periods} periods (config: ${o.config_source}).`;
    return o.notes.map((n) => `## ${n.path} (${n.content_hash})\n${n.head ?? n.content ?? ''}`).join('\n\n');
  },
});

export const getVaultStatsTool = defineTool<NotesTools['get_vault_stats']>({
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
    let words = 0, links = 0, tasks = 0, open = 0;
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
      notes: all.notes.length + all.skipped.length, attachments: all.files.length - all.notes.length - all.skipped.length, folders: folders.size, bytes,
      words, tags: tags.size, links, tasks, open_tasks: open,
      index: st ? { available: true, ready: st.ready, indexed: st.indexed, scanned: st.scanned, pending: st.pending, quarantined: st.quarantined, last_pass_at: st.lastPassAt } : { available: false },
      ...(all.skipped.length ? { notice: `${all.skipped.length} notes could not be read (not UTF-8 or over the size cap) and are counted without their contents.` } : {}),
    };
  },
  render(o) {
    const idx = o.index.available ? `index: ${o.index.ready ? 'ready' : 'catching up'}, ${o.index.indexed}/${o.index.scanned} indexed, ${o.index.pending} pending, ${o.index.quarantined} quarantined` : 'index: not available';
    return [`notes: ${o.notes}`, `attachments: ${o.attachments}`, `folders: ${o.folders}`, `note bytes: ${o.bytes}`, `words: ${o.words}`, `distinct tags: ${o.tags}`, `links: ${o.links}`, `tasks: ${o.tasks} (${o.open_tasks} open)`, idx, ...(o.notice ? [o.notice] : [])].join('\n');
  },
});
