// The in-memory scoring index of one vault's keyword rows: per lexeme, the notes holding it with their term
// frequencies (title and body counted apart), each note's length, and the vault's note count and total length,
// so BM25 reads exact document frequencies and term frequencies without detoasting a vector per candidate (the
// cost that dominated keyword_search on PGlite). PostgreSQL's tsvector/GIN rows stay the persistent source and
// the tokeniser: this index is loaded from the stored vectors (no note is re-parsed), and it catches up on the
// rows stamped after the change stamp it last saw (search_keyword.rev, migration 0007), whoever wrote them — this
// process's pipeline or another replica's. Until it is loaded, or when it is far behind, queries use the SQL path.
//
// Layout: a compressed base (all postings ordered by lexeme: slot and packed frequency in two typed arrays, one
// offset per lexeme) plus a small overlay of per-lexeme arrays for notes written since; a rewritten or removed note
// only marks its old slot dead. The overlay and dead slots are folded into a new base when they grow.
import { setImmediate as yieldLoop } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Database } from '../../../src/sdk/index.js';
import { isSingleCjk } from './cjk.js';

/** Rows read per statement when loading or catching up. */
const LOAD_BATCH = 1000;
/**
 * Rows taken in between turns of the event loop while a vault loads: a row costs ~0.2 ms (its vector parsed, its
 * terms counted), so a whole batch would hold the loop ~200 ms at a time and every tool call behind it.
 */
const APPLY_SLICE = 100;
/** A catch-up of more changed rows than this is not done inside a query: the query uses SQL, a reload runs behind. */
const INLINE_CATCH_UP = 2000;
/** Query units whose lexemes are remembered. */
const LEXEME_CACHE = 20_000;

/**
 * Title (weights A and B) occurrences in the low 16 bits, other occurrences in the high 16 (tsvector keeps ≤ 256
 * positions).
 */
function pack(body: number, title: number): number {
  return ((Math.min(body, 0xffff) << 16) | Math.min(title, 0xffff)) >>> 0;
}

export interface ParsedVector {
  readonly lexemes: string[];
  readonly packed: number[];
}

/**
 * A tsvector's text form (`'lex':1A,5 'other':2`) as lexemes with their occurrence counts, weights A and B (title)
 * apart from the rest. A lexeme without positions counts once in the body.
 */
export function parseTsvector(text: string): ParsedVector {
  const lexemes: string[] = [];
  const packed: number[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    while (i < n && text.charCodeAt(i) === 32) i++;
    if (i >= n) break;
    if (text[i] !== "'") throw new Error(`unexpected tsvector text at ${i}`);
    i++;
    let lex = '';
    let start = i;
    for (;;) {
      const ch = text[i];
      if (ch === "'") {
        if (text[i + 1] === "'") {
          lex += text.slice(start, i + 1);
          i += 2;
          start = i;
          continue;
        }
        lex += text.slice(start, i);
        i++;
        break;
      }
      if (ch === '\\') {
        lex += text.slice(start, i) + text[i + 1];
        i += 2;
        start = i;
        continue;
      }
      if (i >= n) throw new Error('unterminated tsvector lexeme');
      i++;
    }
    let body = 0;
    let title = 0;
    if (text[i] === ':') {
      i++;
      for (;;) {
        while (i < n && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++;
        // A: the title's parsed words, B: its CJK bigrams; C and D (unmarked in the text form) are the body's.
        if (text[i] === 'A' || text[i] === 'B') {
          title++;
          i++;
        } else {
          if (text[i] === 'C' || text[i] === 'D') i++;
          body++;
        }
        if (text[i] === ',') {
          i++;
          continue;
        }
        break;
      }
    } else body = 1;
    lexemes.push(lex);
    packed.push(pack(body, title));
  }
  return { lexemes, packed };
}

interface StoredRow {
  note_id: string | number;
  rev: string | number;
  body_len: number;
  title_keys: string[] | null;
  tsv: string;
}

/** What one query needs from the index: per lexeme (a list of index terms: a lone CJK character is a prefix), per note. */
export interface MemoryScan {
  /** Candidate notes, in no particular order. */
  readonly notes: Int32Array;
  readonly lengths: Int32Array;
  /** Per candidate × lexeme: body occurrences and title occurrences. */
  readonly body: Uint16Array;
  readonly title: Uint16Array;
  /** Notes holding each lexeme (exact). */
  readonly df: number[];
  readonly docs: number;
  readonly avgLength: number;
}

export class VaultMemoryIndex {
  rev = -1;
  loaded = false;
  /** `rev:docs` of the last catch-up, so a stored note count that disagrees for good is reconciled once per change. */
  checked = '';
  private terms = new Map<string, number>();
  private termNames: string[] = [];
  /** CJK character → terms starting with it (for a lone character, matched as a prefix of bigrams). */
  private prefix = new Map<string, number[]>();
  private offsets = new Int32Array(1);
  private postSlot = new Int32Array(0);
  private postTf = new Uint32Array(0);
  /** Postings added since the base was built: term → [slot, packed, slot, packed, …]. */
  private overlay = new Map<number, number[]>();
  private overlayPostings = 0;
  private slotNote = new Int32Array(1024);
  private slotLen = new Int32Array(1024);
  private slotAlive = new Uint8Array(1024);
  private slotKeys: Array<string[] | undefined> = [];
  private slots = 0;
  private deadSlots = 0;
  private noteSlot = new Map<number, number>();
  private titleKeys = new Map<string, Set<number>>();
  private totalLen = 0;
  private basePostings = 0;

  constructor(readonly vaultId: number) {}

  get docs(): number {
    return this.noteSlot.size;
  }

  /** Approximate bytes held by the postings and per-note arrays (for figures, not accounting). */
  get postingBytes(): number {
    return (
      this.postSlot.byteLength +
      this.postTf.byteLength +
      this.offsets.byteLength +
      this.overlayPostings * 16 +
      this.slotNote.byteLength * 2 +
      this.slotAlive.byteLength
    );
  }

  private termId(lexeme: string): number {
    let id = this.terms.get(lexeme);
    if (id === undefined) {
      id = this.termNames.length;
      this.terms.set(lexeme, id);
      this.termNames.push(lexeme);
      const first = String.fromCodePoint(lexeme.codePointAt(0)!);
      if (isSingleCjk(first)) {
        let list = this.prefix.get(first);
        if (!list) this.prefix.set(first, (list = []));
        list.push(id);
      }
    }
    return id;
  }

  private newSlot(noteId: number, len: number, keys: string[]): number {
    if (this.slots === this.slotNote.length) {
      const grow = <T extends Int32Array | Uint8Array>(a: T, make: (n: number) => T): T => {
        const b = make(a.length * 2);
        b.set(a);
        return b;
      };
      this.slotNote = grow(this.slotNote, (n) => new Int32Array(n));
      this.slotLen = grow(this.slotLen, (n) => new Int32Array(n));
      this.slotAlive = grow(this.slotAlive, (n) => new Uint8Array(n));
    }
    const slot = this.slots++;
    this.slotNote[slot] = noteId;
    this.slotLen[slot] = len;
    this.slotAlive[slot] = 1;
    this.slotKeys[slot] = keys.length ? keys : undefined;
    this.noteSlot.set(noteId, slot);
    this.totalLen += len;
    for (const k of keys) {
      let set = this.titleKeys.get(k);
      if (!set) this.titleKeys.set(k, (set = new Set()));
      set.add(noteId);
    }
    return slot;
  }

  /** Forget a note's current version (its postings stay until the next fold, skipped as dead). */
  remove(noteId: number): void {
    const slot = this.noteSlot.get(noteId);
    if (slot === undefined) return;
    this.noteSlot.delete(noteId);
    this.slotAlive[slot] = 0;
    this.deadSlots++;
    this.totalLen -= this.slotLen[slot];
    for (const k of this.slotKeys[slot] ?? []) {
      const set = this.titleKeys.get(k);
      set?.delete(noteId);
      if (set && set.size === 0) this.titleKeys.delete(k);
    }
    this.slotKeys[slot] = undefined;
  }

  /** Take a stored row (a new note or a new version of one) into the overlay. */
  apply(row: StoredRow): void {
    const noteId = Number(row.note_id);
    this.remove(noteId);
    const v = parseTsvector(row.tsv);
    const slot = this.newSlot(noteId, Number(row.body_len), row.title_keys ?? []);
    for (let i = 0; i < v.lexemes.length; i++) {
      const t = this.termId(v.lexemes[i]);
      let list = this.overlay.get(t);
      if (!list) this.overlay.set(t, (list = []));
      list.push(slot, v.packed[i]);
    }
    this.overlayPostings += v.lexemes.length;
  }

  /** Fold the overlay and drop dead slots' postings into a new compressed base. */
  fold(): void {
    const T = this.termNames.length;
    const counts = new Int32Array(T + 1);
    for (let t = 0; t < T; t++) {
      let c = 0;
      if (t + 1 < this.offsets.length)
        for (let p = this.offsets[t]; p < this.offsets[t + 1]; p++) if (this.slotAlive[this.postSlot[p]]) c++;
      const list = this.overlay.get(t);
      if (list) for (let j = 0; j < list.length; j += 2) if (this.slotAlive[list[j]]) c++;
      counts[t + 1] = c;
    }
    for (let t = 0; t < T; t++) counts[t + 1] += counts[t];
    const total = counts[T];
    const slotsOut = new Int32Array(total);
    const tfOut = new Uint32Array(total);
    for (let t = 0; t < T; t++) {
      let w = counts[t];
      if (t + 1 < this.offsets.length) {
        for (let p = this.offsets[t]; p < this.offsets[t + 1]; p++) {
          const s = this.postSlot[p];
          if (this.slotAlive[s]) {
            slotsOut[w] = s;
            tfOut[w++] = this.postTf[p];
          }
        }
      }
      const list = this.overlay.get(t);
      if (list) {
        for (let j = 0; j < list.length; j += 2) {
          if (this.slotAlive[list[j]]) {
            slotsOut[w] = list[j];
            tfOut[w++] = list[j + 1];
          }
        }
      }
    }
    this.offsets = counts;
    this.postSlot = slotsOut;
    this.postTf = tfOut;
    this.overlay = new Map();
    this.overlayPostings = 0;
    this.basePostings = total;
    // Dead slots keep their numbers (postings refer to them); their count resets with the postings dropped.
    this.deadSlots = 0;
  }

  private maybeFold(): void {
    if (
      this.overlayPostings > Math.max(50_000, this.basePostings / 8) ||
      this.deadSlots > Math.max(1000, this.noteSlot.size / 4)
    )
      this.fold();
  }

  /**
   * Load every stored row of the vault, then build the base. The vault's note ids are read first and the rows
   * fetched by primary key in batches: a keyset page (`vault_id = $1 AND note_id > $2 ORDER BY note_id LIMIT n`)
   * was planned, on PGlite's never-analysed tables, as a sort of the whole vault with every vector converted to
   * text before the limit — loading took 7 s at 10k notes and 354 s at 100k (49 s now; bench/search.ts 40).
   * Stops between batches once `closed` says the family closed (the server stopping): the rows are no longer wanted.
   */
  async load(db: Database, closed: () => boolean = () => false): Promise<void> {
    const stamp = await sql<{
      rev: string | number | null;
    }>`SELECT rev FROM search_keyword_stats WHERE vault_id = ${this.vaultId}`.execute(db);
    const rev = Number(stamp.rows[0]?.rev ?? 0);
    const ids = await sql<{
      note_id: string | number;
    }>`SELECT note_id FROM search_keyword WHERE vault_id = ${this.vaultId} ORDER BY note_id`.execute(db);
    for (let i = 0; i < ids.rows.length; i += LOAD_BATCH) {
      if (closed()) return;
      const page = ids.rows.slice(i, i + LOAD_BATCH).map((r) => Number(r.note_id));
      const batch = await sql<StoredRow>`
        SELECT note_id, rev, body_len, title_keys, tsv::text AS tsv FROM search_keyword
        WHERE note_id = ANY(${page}::bigint[]) AND vault_id = ${this.vaultId}`.execute(db);
      for (let k = 0; k < batch.rows.length; k++) {
        this.apply(batch.rows[k]);
        if ((k + 1) % APPLY_SLICE === 0) await yieldLoop();
      }
      if (this.overlayPostings > 2_000_000) this.fold();
    }
    this.fold();
    // Rows written while the pages were read carry a later stamp than `rev`: the first catch-up re-reads them.
    this.rev = rev;
    this.loaded = true;
  }

  /**
   * Take in the rows stamped after the last one seen, and drop notes whose rows are gone (a note count that
   * differs from the stored one after the changes are in). False when more rows changed than a query should wait for.
   */
  async catchUp(db: Database, rev: number, docs: number, inlineLimit = INLINE_CATCH_UP): Promise<boolean> {
    if (rev < this.rev) return false; // the stamp went back (stats recreated): only a reload is safe
    if (rev > this.rev) {
      const n = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM (SELECT 1 FROM search_keyword WHERE vault_id = ${this.vaultId} AND rev > ${this.rev} LIMIT ${inlineLimit + 1}) s`.execute(
        db,
      );
      if ((n.rows[0]?.n ?? 0) > inlineLimit) return false;
      let after = -1;
      for (;;) {
        const batch = await sql<StoredRow>`
          SELECT note_id, rev, body_len, title_keys, tsv::text AS tsv FROM search_keyword
          WHERE vault_id = ${this.vaultId} AND rev > ${this.rev} AND note_id > ${after} ORDER BY note_id LIMIT ${LOAD_BATCH}`.execute(
          db,
        );
        if (!batch.rows.length) break;
        for (const row of batch.rows) this.apply(row);
        after = Number(batch.rows[batch.rows.length - 1].note_id);
      }
      this.rev = rev;
    }
    if (this.noteSlot.size !== docs) {
      const ids = await sql<{
        note_id: string | number;
      }>`SELECT note_id FROM search_keyword WHERE vault_id = ${this.vaultId}`.execute(db);
      const present = new Set(ids.rows.map((r) => Number(r.note_id)));
      for (const id of [...this.noteSlot.keys()]) if (!present.has(id)) this.remove(id);
    }
    this.checked = `${rev}:${docs}`;
    this.maybeFold();
    return true;
  }

  /** Notes whose title or an alias, normalised, is `key`. */
  exactTitle(key: string): number[] {
    return [...(this.titleKeys.get(key) ?? [])];
  }

  /** Index terms a query lexeme stands for: itself, or for a lone CJK character every term starting with it. */
  termsOf(lexeme: string): number[] {
    if (isSingleCjk(lexeme)) return this.prefix.get(lexeme) ?? [];
    const t = this.terms.get(lexeme);
    return t === undefined ? [] : [t];
  }

  /**
   * Every note holding one of the lexemes (plus `extra` notes), with each lexeme's occurrences there and its
   * document frequency. Cost: the lexemes' postings, whatever the vault's size otherwise.
   */
  scan(lexemes: readonly string[], extra: readonly number[] = []): MemoryScan {
    const L = lexemes.length;
    const candOf = new Map<number, number>();
    const candSlots: number[] = [];
    let body = new Uint16Array(Math.max(16, L) * 64);
    let title = new Uint16Array(body.length);
    const df: number[] = new Array<number>(L).fill(0);
    const cand = (slot: number): number => {
      let c = candOf.get(slot);
      if (c === undefined) {
        c = candSlots.length;
        candOf.set(slot, c);
        candSlots.push(slot);
        if ((c + 1) * L > body.length) {
          const b = new Uint16Array(body.length * 2);
          b.set(body);
          body = b;
          const t = new Uint16Array(title.length * 2);
          t.set(title);
          title = t;
        }
      }
      return c;
    };
    const add = (i: number, slot: number, packed: number) => {
      if (!this.slotAlive[slot]) return;
      const at = cand(slot) * L + i;
      if (body[at] === 0 && title[at] === 0) df[i]++;
      body[at] = Math.min(0xffff, body[at] + (packed >>> 16));
      title[at] = Math.min(0xffff, title[at] + (packed & 0xffff));
    };
    for (let i = 0; i < L; i++) {
      for (const t of this.termsOf(lexemes[i])) {
        if (t + 1 < this.offsets.length)
          for (let p = this.offsets[t]; p < this.offsets[t + 1]; p++) add(i, this.postSlot[p], this.postTf[p]);
        const list = this.overlay.get(t);
        if (list) for (let j = 0; j < list.length; j += 2) add(i, list[j], list[j + 1]);
      }
    }
    for (const id of extra) {
      const slot = this.noteSlot.get(id);
      if (slot !== undefined) cand(slot);
    }
    const C = candSlots.length;
    const notes = new Int32Array(C);
    const lengths = new Int32Array(C);
    for (let c = 0; c < C; c++) {
      notes[c] = this.slotNote[candSlots[c]];
      lengths[c] = this.slotLen[candSlots[c]];
    }
    const docs = this.noteSlot.size;
    return {
      notes,
      lengths,
      body: body.subarray(0, C * L),
      title: title.subarray(0, C * L),
      df,
      docs,
      avgLength: docs > 0 ? this.totalLen / docs : 0,
    };
  }
}

/**
 * The memory indexes of one database, one per vault, each loaded on first use (in the background: the SQL path
 * answers meanwhile) and caught up with the stored rows before it answers a query.
 */
export class KeywordMemory {
  private vaults = new Map<number, VaultMemoryIndex>();
  private loading = new Map<number, Promise<void>>();
  /** Catch-ups of one vault run one at a time. */
  private chains = new Map<number, Promise<unknown>>();
  private closed = false;
  /** `configs\u0001unit text` → [config ordinal, lexeme]: what PostgreSQL made of a query unit (bounded, oldest dropped). */
  readonly lexemes = new Map<string, Array<[number, string]>>();

  constructor(
    private readonly db: Database,
    private readonly log?: { warn(obj: object, msg: string): void },
  ) {}

  /** Start loading a vault's index if it is not loaded or loading. Resolves when it is. */
  ensure(vaultId: number): Promise<void> {
    if (this.vaults.has(vaultId)) return Promise.resolve();
    let p = this.loading.get(vaultId);
    if (!p) {
      const v = new VaultMemoryIndex(vaultId);
      p = v
        .load(this.db, () => this.closed)
        .then(
          () => {
            if (!this.closed) this.vaults.set(vaultId, v);
            this.loading.delete(vaultId);
          },
          (err: unknown) => {
            this.loading.delete(vaultId);
            // A load cut short by the family closing (the server stopping, its database gone) is no failure.
            if (!this.closed) this.log?.warn({ err, vaultId }, 'keyword memory index: load failed; queries use SQL');
          },
        );
      this.loading.set(vaultId, p);
    }
    return p;
  }

  /** Drop a vault's index and load it again behind (after a rebuild, or a stamp that went back). */
  private reload(vaultId: number): void {
    if (this.loading.has(vaultId)) return;
    this.vaults.delete(vaultId);
    void this.ensure(vaultId);
  }

  /**
   * The vault's index caught up to `rev` (the stamp the query read), or undefined when the query should use SQL:
   * not loaded yet (loading starts), or too far behind (a reload starts).
   */
  async current(vaultId: number, rev: number, docs: number): Promise<VaultMemoryIndex | undefined> {
    const v = this.vaults.get(vaultId);
    if (!v) {
      void this.ensure(vaultId);
      return undefined;
    }
    const fresh = () => v.rev === rev && (v.docs === docs || v.checked === `${rev}:${docs}`);
    if (fresh()) return v;
    const prev = this.chains.get(vaultId) ?? Promise.resolve();
    const run = prev.then(() => (fresh() ? true : v.catchUp(this.db, rev, docs)));
    this.chains.set(
      vaultId,
      run.catch(() => undefined),
    );
    const ok = await run.catch((err: unknown) => {
      this.log?.warn({ err, vaultId }, 'keyword memory index: catch-up failed; reloading');
      return false;
    });
    if (!ok) {
      this.reload(vaultId);
      return undefined;
    }
    return this.vaults.get(vaultId) === v ? v : undefined;
  }

  rememberLexemes(key: string, lexemes: Array<[number, string]>): void {
    if (this.lexemes.size >= LEXEME_CACHE) this.lexemes.delete(this.lexemes.keys().next().value!);
    this.lexemes.set(key, lexemes);
  }

  /** The vault's index as it stands (its freshness is the caller's to check), or undefined while it loads (loading starts). */
  loaded(vaultId: number): VaultMemoryIndex | undefined {
    const v = this.vaults.get(vaultId);
    if (!v) void this.ensure(vaultId);
    return v;
  }

  /** Whether the index has taken in every row up to the stamp `rev` (and agrees with the stored note count, or has checked it). */
  isFresh(v: VaultMemoryIndex, rev: number, docs: number): boolean {
    return this.vaults.get(v.vaultId) === v && v.rev === rev && (v.docs === docs || v.checked === `${rev}:${docs}`);
  }

  /** Loaded indexes (for figures). */
  get indexes(): ReadonlyMap<number, VaultMemoryIndex> {
    return this.vaults;
  }

  close(): void {
    this.closed = true;
    this.vaults.clear();
  }
}
