// The write-observer contract and the one note-write service, as every family sees them. A family
// declares `writeObservers` (like index contributors); whoever publishes or removes vault bytes calls
// the host's `write-observers` service with the incumbent it already read. Declarations only.
import type { ChangeOrigin, ContributorFactoryContext, ToolContext } from './types.js';

/** What is about to happen to the file at `path`. */
export type WriteKind = 'create' | 'replace' | 'move' | 'remove';

/** One write, as observers see it: the incumbent's bytes are the ones the writer read for its hash check. */
export interface WriteEvent {
  readonly vaultId: number;
  readonly kind: WriteKind;
  /** The path written (for a move: where the file was). */
  readonly path: string;
  /** For a move: where the file goes. */
  readonly toPath?: string;
  /** `note` for markdown notes, `file` for anything the files family writes. */
  readonly target: 'note' | 'file';
  /** The bytes being replaced, moved or removed (absent for a create). */
  readonly incumbent?: { readonly bytes: Uint8Array; readonly hash: string };
  /** A file replaced without its bytes read: larger than any observer keeps (`incumbentLimit`). */
  readonly incumbentUnread?: { readonly size: number };
  /** The bytes being published (create, replace); absent for move and remove. */
  readonly next?: { readonly bytes: Uint8Array; readonly hash: string };
  /** Soft delete (into .trash) or permanent. */
  readonly permanent?: boolean;
  /** Who writes: the credential, its user, the MCP client's own name, and the tool. */
  readonly origin?: ChangeOrigin;
  readonly user?: string;
  readonly client?: string;
  /** The OAuth client id when the credential is an access token (client is then its registered name). */
  readonly clientId?: string;
  readonly tool?: string;
  readonly at: Date;
}

/**
 * A family's observer of writes made through Exocortex's tools. `before` runs before the bytes are
 * published or removed, and may refuse the write by throwing a Refusal (history: its store is full);
 * `after` runs once the write (and its index write-through) is done. Neither may read the vault.
 */
export interface WriteObserver {
  readonly name: string;
  /**
   * The largest incumbent, in bytes, this observer keeps: a writer that would have to read an incumbent
   * only for the observers skips larger ones and says so (`incumbentUnread`). Absent: no limit.
   */
  incumbentLimit?(): number;
  before?(event: WriteEvent): Promise<void>;
  after?(event: WriteEvent): Promise<void>;
}

export type WriteObserverDeclaration =
  | readonly WriteObserver[]
  | ((ctx: ContributorFactoryContext) => readonly WriteObserver[]);

/** The host service `write-observers`: runs every serving family's observers, in family order. */
export interface WriteObservers {
  before(event: WriteEvent): Promise<void>;
  after(event: WriteEvent): Promise<void>;
  /** Whether any serving family observes writes (writers may skip building events when none does). */
  readonly active: boolean;
  /** The largest incumbent any serving observer keeps (the most a writer reads for them). */
  incumbentLimit(): number;
}

// Their refs, WRITE_OBSERVERS and NOTE_WRITER, are in services.ts with the other services'.

/** A note as the write path read it (strict UTF-8, under the write cap), bound to its hash. */
export interface NoteIncumbent {
  readonly path: string;
  readonly text: string;
  readonly bytes: Buffer;
  readonly hash: string;
}

export interface NoteWriteResult {
  readonly path: string;
  readonly contentHash: string;
  readonly previousHash?: string;
  readonly size: number;
}

/**
 * The one note-write path (service `note-writer`, provided by the notes family): path normalisation
 * (`.md` added), the precondition ladder (malformed → no_incumbent → precondition_unavailable →
 * precondition_required → stale), size caps, no-clobber publish, the write observers, index
 * write-through and change-feed attribution. Each method takes the calling tool's ctx.
 */
export interface NoteWriter {
  /** `.md` added when missing, then the vault's path check. */
  notePath(ctx: ToolContext<unknown>, path: string): string;
  /** Refuse a malformed expected_hash (step 1, before any path work). */
  checkHash(ctx: ToolContext<unknown>, expectedHash: string | undefined): void;
  /** Read the incumbent and climb the ladder (expected_hash, notes.write.preconditionRequired). */
  read(ctx: ToolContext<unknown>, path: string, expectedHash: string | undefined): Promise<NoteIncumbent>;
  /** Size and frontmatter caps for new content; the bytes to publish. */
  checkSize(ctx: ToolContext<unknown>, path: string, text: string): Buffer;
  /** Publish over the incumbent; someone else's change since the read is `concurrent_write`. */
  replace(ctx: ToolContext<unknown>, incumbent: NoteIncumbent, bytes: Buffer): Promise<NoteWriteResult>;
  /** No-clobber create (`already_exists`). */
  create(ctx: ToolContext<unknown>, path: string, bytes: Buffer): Promise<NoteWriteResult>;
  /** Soft delete into .trash (or permanent), re-checked against the incumbent's hash. */
  remove(
    ctx: ToolContext<unknown>,
    incumbent: NoteIncumbent,
    options?: { permanent?: boolean },
  ): Promise<{ trashPath?: string }>;
  /**
   * Move the note (no links rewritten), seen by the observers; `already_exists` when `to` is taken.
   * The incumbent is the one `read` returned under the caller's precondition.
   */
  move(ctx: ToolContext<unknown>, incumbent: NoteIncumbent, to: string): Promise<NoteWriteResult>;
  /** Unified diff of two texts, bounded like the dry runs' diffs. */
  diff(ctx: ToolContext<unknown>, path: string, before: string, after: string): Promise<string>;
}
