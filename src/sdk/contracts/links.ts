// The `links` service contract: the graph family's stored links, offered to families that evaluate link
// predicates over many notes at once (bases' file.links, file.backlinks, hasLink). Declarations only.

/** One stored link of a note: where it points as written, and the note it resolves to (null when it does not). */
export interface StoredLink {
  readonly source: string;
  readonly target: string;
  readonly alias: string | null;
  readonly embed: boolean;
  /** The note it resolves to; null for dangling, ambiguous and attachment links (resolve those yourself). */
  readonly resolved: string | null;
  readonly attachment: boolean;
  readonly ambiguous: boolean;
}

/** The `links` service (ref LINKS). */
export interface LinksService {
  /** Every stored link of the vault, by source path and position; at most `max` (the rest are left out, `complete` false). */
  all(vaultId: number, max: number): Promise<{ links: StoredLink[]; complete: boolean }>;
}
