// The key a tag is matched by, everywhere a tool filters by tag: no leading '#', trimmed, lower-cased
// (Obsidian matches tags case-insensitively). Pure.

/** `#Project/Alpha ` → `project/alpha`. */
export function tagKey(tag: string): string {
  return tag.trim().replace(/^#/, '').toLowerCase();
}

/** The distinct non-empty keys of a tag list, in first-seen order. */
export function tagKeys(tags: readonly string[] | undefined | null): string[] {
  return [...new Set((tags ?? []).map(tagKey).filter((k) => k !== ''))];
}
