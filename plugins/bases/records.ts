// The files a base starts from: every indexed note (properties, tags, size, mtime from the index) and every other
// file of the vault (from one walk), with the lookup the evaluator uses — link resolution by the project's resolver,
// stored links from the graph family's `links` service, property types from `.obsidian/types.json`.
// Read-only: reads rows, lists paths, stats files only when file.ctime is asked for; never reads a note's bytes.
import { sql } from 'kysely';
import { buildLinkIndex, resolveLink } from '../../src/markdown/index.js';
import { LINKS, mapLimit } from '../../src/sdk/index.js';
import type { VaultLookup } from './expr/evaluate.js';
import { BLink, type FileRecord } from './expr/values.js';
import type { BasesCtx } from './settings.js';

export interface LoadedVault {
  readonly records: FileRecord[];
  readonly lookup: VaultLookup;
  readonly byPath: ReadonlyMap<string, FileRecord>;
  readonly linksIncomplete: boolean;
}

export interface LoadNeeds {
  readonly links: boolean;
  readonly ctime: boolean;
  /** The view can hold only notes (see CompiledView.notesOnly): the walk is skipped when no property links elsewhere. */
  readonly notesOnly: boolean;
}

/** A wikilink in a property value naming a file by an extension other than .md (an attachment). */
const ATTACHMENT_LINK = /\[\[[^\]|#]*\.(?!md[\]|#])[A-Za-z0-9]{1,16}[\]|#]/i;

function linksToAttachment(v: unknown, depth = 0): boolean {
  if (typeof v === 'string') return v.includes('[[') && ATTACHMENT_LINK.test(v);
  if (depth > 8 || v === null || typeof v !== 'object') return false;
  return Object.values(v as Record<string, unknown>).some((x) => linksToAttachment(x, depth + 1));
}

/** Property types Obsidian keeps in `.obsidian/types.json` ({"types": {"due": "date", …}}). */
async function propertyTypes(ctx: BasesCtx): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  try {
    const data = JSON.parse((await ctx.vault.fs.readAppConfig('types.json')) ?? '{}') as { types?: unknown };
    if (data.types && typeof data.types === 'object')
      for (const [k, v] of Object.entries(data.types as Record<string, unknown>))
        if (typeof v === 'string') out.set(k, v);
  } catch {
    // no types.json (or unreadable): types follow the values' shapes
  }
  return out;
}

export async function loadVault(ctx: BasesCtx, needs: LoadNeeds): Promise<LoadedVault> {
  if (needs.links && !ctx.hasService(LINKS))
    ctx.refuse('service_unavailable', {
      service: 'links',
      reason:
        "file.links, file.backlinks, file.embeds and hasLink read the graph family's link index, and the graph family is not enabled",
    });
  // The walk (file system), the link rows and the notes rows are independent: started together, they overlap.
  const walk = async () => {
    const out: { path: string; size: number; mtimeMs: number }[] = [];
    for await (const e of ctx.vault.fs.walk()) {
      ctx.signal.throwIfAborted();
      if (e.kind === 'file' && !/\.md$/i.test(e.path)) out.push({ path: e.path, size: e.size, mtimeMs: e.mtimeMs });
    }
    return out;
  };
  const walked = needs.notesOnly ? undefined : walk();
  const stored = needs.links ? ctx.service(LINKS).all(ctx.vault.id, ctx.settings.bases.maxLinks) : undefined;
  const typesLoaded = propertyTypes(ctx);
  const notesRead = sql<{
    id: string | number;
    path: string;
    size: number;
    mtime: Date | string;
    tags: string[];
    frontmatter: Record<string, unknown> | null;
  }>`SELECT id, path, size, mtime, tags, frontmatter FROM notes WHERE vault_id = ${ctx.vault.id}`.execute(ctx.db);
  // Settle every started promise even when one fails, so none is left rejecting unobserved.
  await Promise.allSettled([notesRead, walked, stored, typesLoaded]);
  const { rows } = await notesRead;
  const records: FileRecord[] = rows.map((r) => ({
    path: r.path,
    size: Number(r.size),
    mtimeMs: new Date(r.mtime).getTime(),
    ctimeMs: null,
    tags: r.tags ?? [],
    properties: r.frontmatter,
    isNote: true,
  }));
  const byPath = new Map(records.map((r) => [r.path, r]));
  const pathOfId = new Map(rows.map((r) => [Number(r.id), r.path]));
  // Attachments (and .base, .canvas…) are not in the index: one walk of the vault's paths finds them.
  // A view of notes only still walks when a note's property links to an attachment (so the link resolves).
  const files = walked ?? (rows.some((r) => linksToAttachment(r.frontmatter)) ? walk() : undefined);
  for (const e of (await files) ?? []) {
    if (byPath.has(e.path)) continue;
    const rec: FileRecord = { ...e, ctimeMs: null, tags: [], properties: null, isNote: false };
    records.push(rec);
    byPath.set(e.path, rec);
  }
  const index = buildLinkIndex(byPath.keys());
  const resolveCache = new Map<string, string | null>();
  const resolve = (target: string, from: string): string | null => {
    const key = `${from}\0${target}`;
    let r = resolveCache.get(key);
    if (r === undefined) {
      const res = resolveLink(target.split('#')[0], from, index);
      // Obsidian opens the first candidate of an ambiguous link (same folder first, then the shortest path).
      r = res.resolved ?? (res.ambiguous ? (res.candidates[0] ?? null) : null);
      if (resolveCache.size < 100_000) resolveCache.set(key, r);
    }
    return r;
  };
  const outgoing = new Map<string, BLink[]>();
  const embeds = new Map<string, BLink[]>();
  const incoming = new Map<string, BLink[]>();
  let linksIncomplete = false;
  if (needs.links) {
    const { links, complete } = (await stored)!;
    linksIncomplete = !complete;
    const seenBack = new Set<string>();
    for (const l of links) {
      const source = pathOfId.get(l.sourceId);
      if (source === undefined) continue; // a note removed since the notes were read
      const resolved = (l.targetId !== null ? pathOfId.get(l.targetId) : undefined) ?? resolve(l.target, source);
      const link = new BLink(l.target, l.alias, resolved);
      const into = l.embed ? embeds : outgoing;
      const list = into.get(source);
      if (list) list.push(link);
      else into.set(source, [link]);
      if (resolved && resolved !== source && !seenBack.has(`${resolved}\0${source}`)) {
        seenBack.add(`${resolved}\0${source}`);
        const back = incoming.get(resolved);
        const b = new BLink(source, null, source);
        if (back) back.push(b);
        else incoming.set(resolved, [b]);
      }
    }
  }
  if (needs.ctime) {
    await mapLimit(
      records,
      8,
      async (rec) => {
        try {
          rec.ctimeMs = (await ctx.vault.fs.stat(rec.path)).ctimeMs;
        } catch {
          rec.ctimeMs = null;
        }
      },
      { signal: ctx.signal },
    );
  }
  const types = await typesLoaded;
  const none: readonly BLink[] = [];
  return {
    records,
    byPath,
    linksIncomplete,
    lookup: {
      file: (p) => byPath.get(p),
      resolve,
      links: (rec) => outgoing.get(rec.path) ?? none,
      embeds: (rec) => embeds.get(rec.path) ?? none,
      backlinks: (rec) => incoming.get(rec.path) ?? none,
      propertyType: (name) => types.get(name),
      ctime: (rec) => rec.ctimeMs,
    },
  };
}
