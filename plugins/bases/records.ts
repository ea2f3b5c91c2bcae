// The files a base starts from: every indexed note (properties, tags, size, mtime, from the family's record set, which
// the index keeps current) and every other file of the vault (from a walk), with the lookup the evaluator uses — link
// resolution by the project's resolver, stored links from the graph family's `links` service, property types from
// `.obsidian/types.json`. What is built from them (records, resolver, link maps) is kept until they change.
// Read-only: reads rows, lists paths, stats files only when file.ctime is asked for; never reads a note's bytes.
import { buildLinkIndex, resolveLink } from '../../src/markdown/index.js';
import { LINKS, mapLimit, type StoredLink } from '../../src/sdk/index.js';
import type { VaultLookup } from './expr/runtime.js';
import { BLink, type FileRecord, recordMemo } from './expr/values.js';
import { BASES_RECORDS, BasesRecordCache, type NotesSnapshot, type WalkedFile } from './record-cache.js';
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
  const vaultId = ctx.vault.id;
  // Without the family's record set (a test context), a private one serves this query alone.
  const cache = ctx.hasService(BASES_RECORDS) ? ctx.service(BASES_RECORDS) : new BasesRecordCache(ctx.db, Infinity);
  const walk = async () => {
    const out: WalkedFile[] = [];
    for await (const e of ctx.vault.fs.walk()) {
      ctx.signal.throwIfAborted();
      if (e.kind === 'file' && !/\.md$/i.test(e.path)) out.push({ path: e.path, size: e.size, mtimeMs: e.mtimeMs });
    }
    return out;
  };
  const typesLoaded = propertyTypes(ctx);
  // How long each step took (only the slow ones are logged: a first load, a catch-up, a walk).
  const took: Record<string, number> = {};
  let t = performance.now();
  const lap = (name: string) => {
    const now = performance.now();
    took[name] = Math.round(now - t);
    t = now;
  };
  try {
    const notes = await cache.notes(vaultId, ctx.signal);
    lap('notes');
    const stored = needs.links
      ? await cache.links(vaultId, ctx.service(LINKS), ctx.settings.bases.maxLinks, ctx.signal)
      : undefined;
    lap('links');
    // Attachments (and .base, .canvas…) are not in the index: a walk of the vault's paths finds them. A view of
    // notes only still walks when a note's property links to an attachment (so the link resolves).
    const withFiles =
      !needs.notesOnly ||
      cache.derived(vaultId, 'links-attachments', String(notes.version), () =>
        [...notes.rows.values()].some((r) => linksToAttachment(r.frontmatter)),
      );
    const files = withFiles ? await cache.files(vaultId, ctx.settings.bases.filesCacheSeconds * 1000, walk) : undefined;
    lap('walk');
    const base = cache.derived(
      vaultId,
      withFiles ? 'records+files' : 'records',
      `${notes.version}:${files?.version ?? '-'}`,
      () => buildRecords(notes, files?.list),
    );
    lap('records');
    const linkMaps = stored
      ? cache.derived(
          vaultId,
          withFiles ? 'links+files' : 'links',
          `${notes.version}:${files?.version ?? '-'}:${stored.version}`,
          () => buildLinkMaps(base, stored.bySource),
        )
      : undefined;
    lap('linkMaps');
    if (needs.ctime) {
      await mapLimit(
        base.records,
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
    lap('types');
    if (Object.values(took).some((ms) => ms >= 100)) ctx.log.debug({ vault: vaultId, ms: took }, 'bases: vault loaded');
    const none: readonly BLink[] = [];
    const { byPath } = base;
    const typesKey = JSON.stringify([...types].sort());
    // One key per set of property types: values converted under other types are converted again.
    let memoKey = base.memoKeys.get(typesKey);
    if (!memoKey) {
      if (base.memoKeys.size >= 4) base.memoKeys.clear();
      memoKey = {};
      base.memoKeys.set(typesKey, memoKey);
    }
    const key = memoKey;
    return {
      records: base.records,
      byPath,
      linksIncomplete: stored !== undefined && !stored.complete,
      lookup: {
        file: (p) => byPath.get(p),
        resolve: base.resolve,
        links: (rec) => linkMaps?.outgoing.get(rec.path) ?? none,
        embeds: (rec) => linkMaps?.embeds.get(rec.path) ?? none,
        backlinks: (rec) => linkMaps?.incoming.get(rec.path) ?? none,
        propertyType: (name) => types.get(name),
        ctime: (rec) => rec.ctimeMs,
        memo: (rec) => recordMemo(rec, key),
      },
    };
  } finally {
    // Settle the started read even when another step failed, so it is never left rejecting unobserved.
    await typesLoaded.catch(() => undefined);
  }
}

interface BuiltRecords {
  readonly records: FileRecord[];
  readonly byPath: ReadonlyMap<string, FileRecord>;
  readonly pathOfId: ReadonlyMap<number, string>;
  readonly resolve: (target: string, from: string) => string | null;
  /** The memo key of each set of property types the records' values were converted under (see recordMemo). */
  readonly memoKeys: Map<string, object>;
}

/** The records of the notes (and, when walked, the other files), and the resolver over their paths. */
function buildRecords(notes: NotesSnapshot, walked: readonly WalkedFile[] | undefined): BuiltRecords {
  const records: FileRecord[] = [];
  const byPath = new Map<string, FileRecord>();
  const pathOfId = new Map<number, string>();
  for (const r of notes.rows.values()) {
    const rec: FileRecord = {
      path: r.path,
      size: r.size,
      mtimeMs: r.mtimeMs,
      ctimeMs: null,
      tags: r.tags as string[],
      properties: r.frontmatter,
      isNote: true,
    };
    records.push(rec);
    byPath.set(r.path, rec);
    pathOfId.set(r.id, r.path);
  }
  for (const e of walked ?? []) {
    if (byPath.has(e.path)) continue;
    const rec: FileRecord = { ...e, ctimeMs: null, tags: [], properties: null, isNote: false };
    records.push(rec);
    byPath.set(e.path, rec);
  }
  // In path order, the engine's last sort key: a view's rows then come out of the filter already in that order.
  records.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
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
  return { records, byPath, pathOfId, resolve, memoKeys: new Map() };
}

interface LinkMaps {
  readonly outgoing: ReadonlyMap<string, BLink[]>;
  readonly embeds: ReadonlyMap<string, BLink[]>;
  readonly incoming: ReadonlyMap<string, BLink[]>;
}

/** Each file's outgoing links, embeds and backlinks, from the stored links by source note. */
function buildLinkMaps(base: BuiltRecords, bySource: ReadonlyMap<number, readonly StoredLink[]>): LinkMaps {
  const outgoing = new Map<string, BLink[]>();
  const embeds = new Map<string, BLink[]>();
  const incoming = new Map<string, BLink[]>();
  const seenBack = new Set<string>();
  for (const [sourceId, links] of bySource) {
    const source = base.pathOfId.get(sourceId);
    if (source === undefined) continue; // a note removed since its links were read
    for (const l of links) {
      const resolved: string | null =
        (l.targetId !== null ? base.pathOfId.get(l.targetId) : undefined) ?? base.resolve(l.target, source);
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
  return { outgoing, embeds, incoming };
}
