// The bases family's per-vault record set: every indexed note's fields a base reads (path, size, mtime, tags,
// frontmatter), and, once a query has asked for them, its stored links, held in memory between queries. Loaded once
// from the index, kept current by an observer index contributor (the SDK's way for a family to watch the index
// pipeline's changes): it marks the notes a pass wrote, moved or removed, and the next query re-reads only those rows.
// Bounded: at most `bases.cacheNotes` notes over all vaults (least recently queried vaults go first; a vault larger
// than the bound is read per query). Read-only: reads the notes table and the `links` service, never vault bytes.
import { sql } from 'kysely';
import {
  type ContributorFactoryContext,
  type Database,
  INDEX,
  type IndexContributor,
  type LinksService,
  type StoredLink,
  serviceRef,
} from '../../src/sdk/index.js';

export interface NoteRow {
  readonly id: number;
  readonly path: string;
  readonly size: number;
  readonly mtimeMs: number;
  readonly tags: readonly string[];
  readonly frontmatter: Record<string, unknown> | null;
}

/** The notes of one vault as a query sees them; `version` changes whenever a row does. */
export interface NotesSnapshot {
  readonly rows: ReadonlyMap<number, NoteRow>;
  readonly version: number;
}

export interface WalkedFile {
  readonly path: string;
  readonly size: number;
  readonly mtimeMs: number;
}

export interface FilesSnapshot {
  readonly list: readonly WalkedFile[];
  readonly version: number;
}

export interface LinksSnapshot {
  readonly bySource: ReadonlyMap<number, readonly StoredLink[]>;
  readonly complete: boolean;
  readonly version: number;
}

interface LinksEntry {
  readonly max: number;
  bySource: Map<number, StoredLink[]>;
  count: number;
  complete: boolean;
  version: number;
  /** Notes whose links were re-read with their rows but not yet here. */
  readonly dirty: Set<number>;
}

interface VaultEntry {
  rows: Map<number, NoteRow>;
  version: number;
  /** Marked by index writes not yet known to be committed (re-read by every query until the pass ends). */
  readonly pending: Set<number>;
  /** Marked by passes that have ended (committed): re-read once by the next query. */
  readonly committed: Set<number>;
  /** Too many changes to re-read one by one, or the pipeline started over: the next query reloads all. */
  stale: boolean;
  lastUsed: number;
  links: LinksEntry | null;
  /** The vault's other files from the last walk, and when it was taken. */
  files: { readonly list: readonly WalkedFile[]; readonly at: number; readonly version: number } | null;
  /** What a query built from the rows (records, link maps), kept while what it was built from is unchanged. */
  readonly derived: Map<string, { readonly key: string; readonly value: unknown }>;
  /** Queries of this vault hold it in turn, so that one load or catch-up serves those waiting behind it. */
  turn: Promise<unknown>;
}

/** Marked notes beyond which a reload is cheaper than re-reading them by id. */
const RELOAD_OVER = 2000;
/** Ids re-read per statement. */
const READ_BATCH = 1000;

type RawNote = {
  id: string | number;
  path: string;
  size: number;
  mtime: Date | string;
  tags: string[] | null;
  frontmatter: Record<string, unknown> | null;
};

const toRow = (r: RawNote): NoteRow => ({
  id: Number(r.id),
  path: r.path,
  size: Number(r.size),
  mtimeMs: new Date(r.mtime).getTime(),
  tags: r.tags ?? [],
  frontmatter: r.frontmatter,
});

export class BasesRecordCache {
  private readonly vaults = new Map<number, VaultEntry>();

  /** @param maxNotes the most notes held over all vaults (0: nothing is held, every query reads the index). */
  constructor(
    private readonly db: Database,
    private readonly maxNotes: number,
  ) {}

  /** The vault's notes, current as of the index's last committed change. */
  notes(vaultId: number, signal?: AbortSignal): Promise<NotesSnapshot> {
    const e = this.entry(vaultId);
    e.lastUsed = Date.now();
    return this.inTurn(e, async () => {
      signal?.throwIfAborted();
      if (e.stale || e.version === 0) {
        // Marks made while the full read runs stay pending and are re-read by the next query.
        e.committed.clear();
        e.links = null;
        const { rows } = await sql<RawNote>`
          SELECT id, path, size, mtime, tags, frontmatter FROM notes WHERE vault_id = ${vaultId}`.execute(this.db);
        const read = new Map(rows.map((r) => [Number(r.id), toRow(r)]));
        e.version++;
        if (!this.keep(vaultId, read.size)) {
          // Over the bound alone: answered from what was read, held by nobody.
          e.stale = true;
          e.rows = new Map();
          return { rows: read, version: e.version };
        }
        e.rows = read;
        e.stale = false;
      } else if (e.pending.size + e.committed.size > 0) {
        const taken = [...e.committed];
        const ids = [...new Set([...taken, ...e.pending])];
        for (const id of taken) e.committed.delete(id);
        const fresh = new Map<number, NoteRow>();
        for (let i = 0; i < ids.length; i += READ_BATCH) {
          const batch = ids.slice(i, i + READ_BATCH);
          const { rows } = await sql<RawNote>`
            SELECT id, path, size, mtime, tags, frontmatter FROM notes
            WHERE vault_id = ${vaultId} AND id = ANY(${`{${batch.join(',')}}`}::bigint[])`.execute(this.db);
          for (const r of rows) fresh.set(Number(r.id), toRow(r));
        }
        let changed = false;
        for (const id of ids) {
          const before = e.rows.get(id);
          const now = fresh.get(id);
          if (now === undefined) {
            if (before !== undefined) {
              e.rows.delete(id);
              changed = true;
            }
          } else if (!before || !sameRow(before, now)) {
            e.rows.set(id, now);
            changed = true;
          }
          e.links?.dirty.add(id);
        }
        if (changed) e.version++;
      }
      return { rows: e.rows, version: e.version };
    });
  }

  /**
   * The vault's stored links (from the graph family's `links` service), by source note: read whole once, then
   * only for the notes changed since. Call after `notes()` in the same query so both are as of one moment.
   */
  links(vaultId: number, service: LinksService, max: number, signal?: AbortSignal): Promise<LinksSnapshot> {
    const e = this.entry(vaultId);
    return this.inTurn(e, async () => {
      signal?.throwIfAborted();
      let l = e.links;
      if (!l || l.max !== max || !l.complete) {
        const { links, complete } = await service.all(vaultId, max);
        const bySource = new Map<number, StoredLink[]>();
        for (const x of links) {
          const list = bySource.get(x.sourceId);
          if (list) list.push(x);
          else bySource.set(x.sourceId, [x]);
        }
        l = { max, bySource, count: links.length, complete, version: (l?.version ?? 0) + 1, dirty: new Set() };
        // An incomplete read is not kept: the next query reads again (the bound may no longer be reached).
        if (complete && this.cacheable(vaultId)) e.links = l;
      } else if (l.dirty.size > 0) {
        const ids = [...l.dirty];
        l.dirty.clear();
        const read = service.of
          ? await service.of(vaultId, ids)
          : (await service.all(vaultId, max)).links.filter((x) => ids.includes(x.sourceId));
        for (const id of ids) {
          l.count -= l.bySource.get(id)?.length ?? 0;
          l.bySource.delete(id);
        }
        for (const x of read) {
          const list = l.bySource.get(x.sourceId);
          if (list) list.push(x);
          else l.bySource.set(x.sourceId, [x]);
          l.count++;
        }
        l.version++;
        if (l.count > max) {
          l.complete = false;
          e.links = null;
        }
      }
      return { bySource: l.bySource, complete: l.complete, version: l.version };
    });
  }

  /**
   * The vault's files other than notes (attachments, .base, .canvas…), which the index does not hold and no index
   * pass reports: one walk, reused for `ttlMs` (0: every query walks).
   */
  files(vaultId: number, ttlMs: number, walk: () => Promise<WalkedFile[]>): Promise<FilesSnapshot> {
    const e = this.entry(vaultId);
    return this.inTurn(e, async () => {
      const now = Date.now();
      if (e.files && ttlMs > 0 && now - e.files.at < ttlMs && !e.stale) return e.files;
      const list = await walk();
      // A walk that finds what the last one found keeps its version, so what was built from it is kept too.
      const same = e.files !== null && sameFiles(e.files.list, list);
      const snap = { list: same ? e.files!.list : list, at: now, version: (e.files?.version ?? 0) + (same ? 0 : 1) };
      if (!e.stale) e.files = snap;
      return snap;
    });
  }

  /**
   * What `build` makes of this vault under `name` (a few kinds per vault), rebuilt only when `key` (the versions
   * it was built from) changes.
   */
  derived<T>(vaultId: number, name: string, key: string, build: () => T): T {
    const e = this.entry(vaultId);
    const held = e.derived.get(name);
    if (held?.key === key) return held.value as T;
    const value = build();
    if (!e.stale) e.derived.set(name, { key, value });
    return value;
  }

  /** An index pass wrote, moved or removed this note (its transaction may not have committed yet). */
  mark(vaultId: number, id: number): void {
    const e = this.vaults.get(vaultId);
    if (!e || e.stale) return;
    e.pending.add(id);
    if (e.pending.size + e.committed.size > RELOAD_OVER) this.invalidate(vaultId);
  }

  /** The pass that made the marks has committed them. */
  passEnded(vaultId: number): void {
    const e = this.vaults.get(vaultId);
    if (!e) return;
    for (const id of e.pending) e.committed.add(id);
    e.pending.clear();
  }

  /** Forget what is held of this vault: the next query reads it whole. */
  invalidate(vaultId: number): void {
    const e = this.vaults.get(vaultId);
    if (!e) return;
    e.stale = true;
    e.pending.clear();
    e.committed.clear();
    e.links = null;
    e.derived.clear();
  }

  clear(): void {
    this.vaults.clear();
  }

  private entry(vaultId: number): VaultEntry {
    let e = this.vaults.get(vaultId);
    if (!e) {
      e = {
        rows: new Map(),
        version: 0,
        pending: new Set(),
        committed: new Set(),
        stale: false,
        lastUsed: Date.now(),
        links: null,
        files: null,
        derived: new Map(),
        turn: Promise.resolve(),
      };
      this.vaults.set(vaultId, e);
    }
    return e;
  }

  private inTurn<T>(e: VaultEntry, fn: () => Promise<T>): Promise<T> {
    const run = e.turn.then(fn, fn);
    e.turn = run.catch(() => undefined);
    return run;
  }

  private cacheable(vaultId: number): boolean {
    const e = this.vaults.get(vaultId);
    return e !== undefined && !e.stale;
  }

  /**
   * Make room for `size` notes of this vault under the bound, least recently queried vaults first; false when the
   * vault alone is over it (then it is not held, and every query of it reads the index).
   */
  private keep(current: number, size: number): boolean {
    if (size > this.maxNotes) return false;
    const held = () =>
      [...this.vaults.entries()].reduce((n, [id, e]) => n + (id === current || e.stale ? 0 : e.rows.size), size);
    const byAge = [...this.vaults.entries()]
      .filter(([id]) => id !== current)
      .sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    while (held() > this.maxNotes && byAge.length > 0) this.vaults.delete(byAge.shift()![0]);
    return true;
  }
}

function sameFiles(a: readonly WalkedFile[], b: readonly WalkedFile[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++)
    if (a[i].path !== b[i].path || a[i].size !== b[i].size || a[i].mtimeMs !== b[i].mtimeMs) return false;
  return true;
}

function sameRow(a: NoteRow, b: NoteRow): boolean {
  return (
    a.path === b.path &&
    a.size === b.size &&
    a.mtimeMs === b.mtimeMs &&
    a.tags.join('\0') === b.tags.join('\0') &&
    JSON.stringify(a.frontmatter) === JSON.stringify(b.frontmatter)
  );
}

/** The bases family's record set (a service of the family, so its tools and its contributor share one per generation). */
export const BASES_RECORDS = serviceRef<BasesRecordCache>('bases-records');

/**
 * The observer contributor keeping the record set current: it keeps no rows, it only marks the notes each pass
 * touches, and at a pass's end tells the set they are committed. A pipeline's first full pass (the vault was just
 * served here: a start, or a lease taken over from another process that indexed it meanwhile) drops what is held.
 */
export function basesRecordsContributor(ctx: ContributorFactoryContext): IndexContributor {
  const cache = () => (ctx.hasService(BASES_RECORDS) ? ctx.service(BASES_RECORDS) : undefined);
  return {
    name: 'bases-records',
    version: 1,
    observer: true,
    async write(_trx, note) {
      cache()?.mark(note.vaultId, note.id);
    },
    async writeMany(_trx, items) {
      const c = cache();
      for (const { note } of items) c?.mark(note.vaultId, note.id);
    },
    async remove(_trx, note) {
      cache()?.mark(note.vaultId, note.id);
    },
    async removeMany(_trx, notes) {
      const c = cache();
      for (const note of notes) c?.mark(note.vaultId, note.id);
    },
    async rename(_trx, note) {
      cache()?.mark(note.vaultId, note.id);
    },
    async passEnd(_db, pass) {
      const c = cache();
      if (!c) return;
      const firstPass = pass.caughtUp && ctx.hasService(INDEX) && !ctx.service(INDEX).status(pass.vaultId).ready;
      if (firstPass) c.invalidate(pass.vaultId);
      else c.passEnded(pass.vaultId);
    },
  };
}
