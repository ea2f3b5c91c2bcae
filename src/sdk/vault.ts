// The vault service interface every family sees: vault-relative POSIX paths in, bytes and typed
// refusals out. The host's implementation (src/host/vault) is the only code that touches vault bytes.

export type VaultEntryKind = 'file' | 'directory' | 'symlink';

export interface VaultEntry {
  /** Vault-relative POSIX path, as stored on disk (never normalised). */
  readonly path: string;
  readonly kind: VaultEntryKind;
  readonly size: number;
  readonly mtimeMs: number;
  /** For symlinks: the link text, and whether it resolves inside the vault. */
  readonly linkTarget?: string;
  readonly linkInside?: boolean;
}

export interface VaultStat extends VaultEntry {
  readonly ctimeMs: number;
  readonly ino: number;
  readonly nlink: number;
  /** statx mount id (0 where the kernel does not report one): with ino, identifies the file across mounts. */
  readonly mountId: number;
}

export interface ListOptions {
  readonly recursive?: boolean;
  /** A glob (picomatch syntax) matched against the path relative to the listed folder. */
  readonly pattern?: string;
  readonly limit?: number;
}

export interface ReadOptions {
  /** Refuse with `too_large` past this many bytes. */
  readonly maxBytes?: number;
}

export interface WriteResult {
  readonly path: string;
  /** `sha256:` + 64 lowercase hex of the bytes now at `path`. */
  readonly contentHash: string;
  readonly size: number;
  /** For replace: the hash of the bytes that were replaced. */
  readonly previousHash?: string;
}

export interface ReplaceOptions {
  /** When given, the write happens only if the incumbent's hash is exactly this. */
  readonly expectedHash?: string;
}

export interface TrashResult {
  readonly path: string;
  /** Vault-relative path under `.trash/` where the file now lives. */
  readonly trashPath: string;
}

export interface VaultCapabilities {
  readonly openat2: boolean;
  readonly tmpfile: boolean;
  readonly renameNoReplace: boolean;
  readonly statxMountId: boolean;
  /** True when O_TMPFILE is unavailable and vault.allowNamedStaging let the server start anyway. */
  readonly namedStaging: boolean;
  /** Which implementation is serving: 'native' (kernel-enforced) or 'node' (fallback). */
  readonly engine: 'native' | 'node';
}

export interface VaultFs {
  /** Absolute path of the vault root (for logs and doctor only; never shown to clients). */
  readonly root: string;
  readonly capabilities: VaultCapabilities;

  /** Throws `invalid_path` unless `path` is an acceptable vault-relative path; returns it unchanged. */
  checkPath(path: string): string;
  stat(path: string): Promise<VaultStat>;
  exists(path: string): Promise<boolean>;
  readBytes(path: string, options?: ReadOptions): Promise<Buffer>;
  /** Strict UTF-8: invalid bytes refuse with `not_utf8`. A leading BOM is kept. */
  readText(path: string, options?: ReadOptions): Promise<string>;
  /** `readText` plus the size and modification time of the file it read, from the same open (no separate stat). */
  readTextWithStat(path: string, options?: ReadOptions): Promise<{ text: string; size: number; mtimeMs: number }>;
  list(folder: string, options?: ListOptions): Promise<VaultEntry[]>;
  /**
   * Read one of Obsidian's own settings files under `.obsidian/` — `daily-notes.json` or
   * `plugins/<id>/data.json` — the only dot path any family may read (never write). Symlinks are not
   * followed; at most 1 MiB; strict UTF-8. Resolves undefined when the file does not exist.
   */
  readAppConfig(file: string): Promise<string | undefined>;
  /** Every entry below the root, depth-first, skipping dot-entries; symlinks reported, not followed. */
  walk(): AsyncIterable<VaultEntry>;
  contentHash(bytes: Uint8Array): string;

  /** No-clobber create: `already_exists` when anything is at `path`. Parents are created. */
  create(path: string, bytes: Uint8Array): Promise<WriteResult>;
  /** Checked overwrite of an existing file (see ReplaceOptions). */
  replace(path: string, bytes: Uint8Array, options?: ReplaceOptions): Promise<WriteResult>;
  /** Rename without replacing: `already_exists` when `to` exists. Parents of `to` are created. */
  move(from: string, to: string): Promise<void>;
  /** Soft delete: one non-replacing rename into `.trash/`. */
  trash(path: string): Promise<TrashResult>;
  /** Permanent delete of a file. */
  unlink(path: string): Promise<void>;
  /** Create a folder (and parents); succeeds when it already exists. */
  mkdirp(path: string): Promise<void>;
  close(): Promise<void>;
}
