// The `links` service contract: the graph family's stored links, offered to families that evaluate link
// predicates over many notes at once (bases' file.links, file.backlinks, hasLink). Declarations only.

/** One stored link of a note, by note ids (the caller maps ids to paths from the notes it read). */
export interface StoredLink {
  readonly sourceId: number;
  /** The note it resolves to; null for dangling, ambiguous and attachment links (resolve those yourself). */
  readonly targetId: number | null;
  /** The target as written, before `#` and `|`. */
  readonly target: string;
  readonly alias: string | null;
  readonly embed: boolean;
  readonly attachment: boolean;
  readonly ambiguous: boolean;
}

/** The `links` service (ref LINKS). */
export interface LinksService {
  /** Every stored link of the vault, by source note and position; at most `max` (the rest are left out, `complete` false). */
  all(vaultId: number, max: number): Promise<{ links: StoredLink[]; complete: boolean }>;
  /**
   * The stored links of these notes only, by source note and position (a caller that holds `all` keeps it current
   * with the notes the index changed). Optional for older providers: callers fall back to `all`.
   */
  of?(vaultId: number, sourceIds: readonly number[]): Promise<StoredLink[]>;
}
