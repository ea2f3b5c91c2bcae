// Obsidian-compatible link resolution over a caller-supplied LinkIndex (in-memory maps or a database).
// Pure: it never touches the filesystem, and when several notes match it says so instead of hiding it.

/** What resolveLink needs to know about the vault. Every method is synchronous. */
export interface LinkIndex {
  /** True when a file exists at exactly this vault-relative path. */
  byPath(path: string): boolean;
  /** Paths whose basename (extension included), lower-cased, equals `nameLower`. */
  byBasenameLower(nameLower: string): string[];
  /** Note paths with a frontmatter alias that, lower-cased, equals `aliasLower`. */
  byAliasLower(aliasLower: string): string[];
}

export interface LinkResolution {
  /** The chosen path (after the tie-break when ambiguous), or null for a dangling link. */
  resolved: string | null;
  ambiguous: boolean;
  /** Every matching path, in tie-break order. Empty when dangling. */
  candidates: string[];
}

/**
 * Resolve a link target (no `#anchor`, no `|alias`) written in `fromPath`. Order: for a target with folders,
 * exact path (with or without `.md`, from the vault root, then relative to the source folder); then basename,
 * case-insensitive (a target with folders must match the end of the path); then a frontmatter alias. An
 * empty target is the source note itself. Several matches are ambiguous: the tie-break prefers a name of the
 * same case, then the source's folder, then the fewest path segments, then the alphabetically first path.
 * An ambiguous alias resolves to nothing.
 */
export function resolveLink(target: string, fromPath: string, index: LinkIndex): LinkResolution {
  const t = target.trim().replace(/\\/g, '/');
  if (t === '') return { resolved: fromPath, ambiguous: false, candidates: [fromPath] };
  const folder = dirname(fromPath);
  const rooted = normalize(t.replace(/^\/+/, ''));
  const relative = normalize(folder === '' ? t : `${folder}/${t}`);
  // A bare name goes straight to basename matching, so that several same-named notes are reported.
  for (const p of t.includes('/') ? [rooted, relative] : []) {
    if (p === null) continue;
    for (const candidate of [p, `${p}.md`]) if (index.byPath(candidate)) return single(candidate);
  }

  const name = t.slice(t.lastIndexOf('/') + 1);
  const suffix = t.includes('/') ? normalize(t.replace(/^\/+/, '').replace(/^(\.\.?\/)+/, '')) : null;
  let matches: string[] = [];
  for (const base of [`${name}.md`, name]) {
    const hits = index.byBasenameLower(base.toLowerCase());
    const filtered = suffix === null ? hits : hits.filter((h) => endsWithPath(h, `${suffix}${base === name ? '' : '.md'}`));
    if (filtered.length > 0) {
      matches = filtered;
      break;
    }
  }
  if (matches.length === 1) return single(matches[0]);
  if (matches.length > 1) {
    const ordered = tieBreak(unique(matches), folder, name);
    return { resolved: ordered[0], ambiguous: ordered.length > 1, candidates: ordered };
  }

  const aliases = unique(index.byAliasLower(t.toLowerCase()));
  if (aliases.length === 1) return single(aliases[0]);
  if (aliases.length > 1) return { resolved: null, ambiguous: true, candidates: tieBreak(aliases, folder) };
  return { resolved: null, ambiguous: false, candidates: [] };
}

function single(path: string): LinkResolution {
  return { resolved: path, ambiguous: false, candidates: [path] };
}

/** Same-case name first (when given), then the source's folder, then fewest path segments, then code-point order. */
export function tieBreak(paths: string[], sourceFolder: string, name?: string): string[] {
  const sameCase = (p: string): number => {
    if (name === undefined) return 0;
    const base = p.slice(p.lastIndexOf('/') + 1);
    return base === name || base === `${name}.md` ? 0 : 1;
  };
  return [...paths].sort((a, b) => {
    if (sameCase(a) !== sameCase(b)) return sameCase(a) - sameCase(b);
    const sa = dirname(a) === sourceFolder ? 0 : 1;
    const sb = dirname(b) === sourceFolder ? 0 : 1;
    if (sa !== sb) return sa - sb;
    const da = a.split('/').length;
    const db = b.split('/').length;
    if (da !== db) return da - db;
    return a < b ? -1 : a > b ? 1 : 0;
  });
}

function endsWithPath(path: string, suffix: string): boolean {
  const p = path.toLowerCase();
  const s = suffix.toLowerCase();
  return p === s || p.endsWith(`/${s}`);
}

function dirname(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

/** Collapse `.` and `..` segments; null when the path climbs above the vault root. */
function normalize(path: string): string | null {
  const out: string[] = [];
  for (const seg of path.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length === 0) return null;
      out.pop();
    } else out.push(seg);
  }
  return out.join('/');
}

function unique(items: string[]): string[] {
  return [...new Set(items)];
}

/** An in-memory LinkIndex over vault-relative paths and each note's frontmatter aliases. */
export function buildLinkIndex(paths: string[], aliases: Map<string, string[]>): LinkIndex {
  const all = new Set(paths);
  const byBase = new Map<string, string[]>();
  for (const p of paths) {
    const key = p.slice(p.lastIndexOf('/') + 1).toLowerCase();
    const list = byBase.get(key);
    if (list) list.push(p);
    else byBase.set(key, [p]);
  }
  const byAlias = new Map<string, string[]>();
  for (const [p, list] of aliases) {
    for (const a of list) {
      const key = a.trim().toLowerCase();
      if (key === '') continue;
      const hits = byAlias.get(key);
      if (hits) { if (!hits.includes(p)) hits.push(p); } else byAlias.set(key, [p]);
    }
  }
  return {
    byPath: (p) => all.has(p),
    byBasenameLower: (n) => byBase.get(n) ?? [],
    byAliasLower: (a) => byAlias.get(a) ?? [],
  };
}
