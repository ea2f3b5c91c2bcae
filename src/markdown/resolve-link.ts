// Obsidian link resolution (docs/links.md) over a caller-supplied LinkIndex of vault file paths: the one
// resolver every tool uses. Pure: never touches the filesystem, and never picks one of several matches.

/** What resolveLink needs to know about the vault. Every method is synchronous. */
export interface LinkIndex {
  /** Paths that equal `pathLower` when lower-cased (several only on a case-sensitive filesystem). */
  byPathLower(pathLower: string): readonly string[];
  /** Paths whose file name (extension included), lower-cased, equals `nameLower`. */
  byNameLower(nameLower: string): readonly string[];
}

/** Which rule matched: same note, vault path, path relative to the linking note, path suffix, file name. */
export type ResolvedVia = 'self' | 'path' | 'relative' | 'suffix' | 'name';

export interface LinkResolution {
  /** The one matching path, or null when the link is dangling or ambiguous. */
  resolved: string | null;
  /** Two or more files match; none is chosen. */
  ambiguous: boolean;
  /** Every matching path (same folder first, then fewest segments, then code-point order). Empty when dangling. */
  candidates: string[];
  /** The rule that produced the candidates (absent when dangling). */
  via?: ResolvedVia;
}

const DANGLING: LinkResolution = Object.freeze({ resolved: null, ambiguous: false, candidates: [] }) as LinkResolution;

/**
 * Resolve a link target (the text before `|` and `#`) written in the note at `fromPath`, case-insensitively:
 * - '' is the linking note itself;
 * - a target without `/` matches by file name (`x` → `x.md`, else a file named exactly `x`, e.g. `a.png`);
 * - a target with `/` matches the vault path (with or without `.md`), else the path relative to the linking
 *   note's folder, else files whose path ends with `/` + target; never the bare file name. A leading `/`
 *   means the vault root only; a leading `./` or `../` means the linking note's folder only.
 * Several matches at the first rule that has any are ambiguous. Frontmatter aliases never resolve a link.
 */
export function resolveLink(target: string, fromPath: string, index: LinkIndex): LinkResolution {
  const t = target.trim().replace(/\\/g, '/');
  if (t === '') return { resolved: fromPath, ambiguous: false, candidates: [fromPath], via: 'self' };
  const folder = dirname(fromPath);
  if (!t.includes('/'))
    return settle(
      withMd(t, (n) => index.byNameLower(n)),
      folder,
      'name',
    );

  const steps: Array<[ResolvedVia, string | null]> = [];
  if (t.startsWith('/')) steps.push(['path', normalize(t)]);
  else if (t.startsWith('./') || t.startsWith('../')) steps.push(['relative', normalize(join(folder, t))]);
  else steps.push(['path', normalize(t)], ['relative', folder === '' ? null : normalize(join(folder, t))]);
  for (const [via, p] of steps) {
    if (p === null || p === '') continue;
    const hits = withMd(p, (q) => index.byPathLower(q));
    if (hits.length > 0) return settle(hits, folder, via);
  }
  if (t.startsWith('/') || t.startsWith('./') || t.startsWith('../')) return DANGLING;
  const suffix = normalize(t);
  if (suffix === null || suffix === '') return DANGLING;
  // Every path ending in `/suffix` has the suffix's last segment as its file name.
  const hits = withMd(suffix, (s) =>
    index.byNameLower(s.slice(s.lastIndexOf('/') + 1)).filter((p) => p.toLowerCase().endsWith(`/${s}`)),
  );
  return hits.length > 0 ? settle(hits, folder, 'suffix') : DANGLING;
}

/** Look `key.md` up first (unless the key already ends in `.md`), then `key` as written; keys are lower-cased. */
function withMd(key: string, lookup: (lower: string) => readonly string[]): string[] {
  const lower = key.toLowerCase();
  if (!lower.endsWith('.md')) {
    const md = lookup(`${lower}.md`);
    if (md.length > 0) return [...new Set(md)];
  }
  return [...new Set(lookup(lower))];
}

function settle(hits: string[], folder: string, via: ResolvedVia): LinkResolution {
  if (hits.length === 0) return DANGLING;
  if (hits.length === 1) return { resolved: hits[0], ambiguous: false, candidates: hits, via };
  return { resolved: null, ambiguous: true, candidates: orderCandidates(hits, folder), via };
}

/** Display order for candidates: the linking note's folder first, then fewest path segments, then code-point order. */
export function orderCandidates(paths: readonly string[], sourceFolder: string): string[] {
  // Each path's sort key is computed once, not in every comparison: a name shared by 40 notes sorted its candidates
  // at ~200 comparisons, each splitting two paths, for every link to it.
  const keyed = paths.map((p) => ({ p, rank: (dirname(p) === sourceFolder ? 0 : 1 << 20) + segments(p) }));
  keyed.sort((a, b) => a.rank - b.rank || (a.p < b.p ? -1 : a.p > b.p ? 1 : 0));
  return keyed.map((k) => k.p);
}

/** How many `/`-separated segments a path has. */
function segments(path: string): number {
  let n = 1;
  for (let i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) n++;
  return n;
}

/** The folder of a vault path ('' at the root). */
export function dirname(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

function join(folder: string, rel: string): string {
  return folder === '' ? rel : `${folder}/${rel}`;
}

/** Collapse `.` and `..` segments and leading `/`; null when the path climbs above the vault root. */
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

/** An in-memory LinkIndex over vault-relative file paths (notes and attachments alike). */
export function buildLinkIndex(paths: Iterable<string>): LinkIndex {
  const byPath = new Map<string, string[]>();
  const byName = new Map<string, string[]>();
  const add = (map: Map<string, string[]>, key: string, p: string): void => {
    const list = map.get(key);
    if (!list) map.set(key, [p]);
    else if (!list.includes(p)) list.push(p);
  };
  for (const p of paths) {
    const lower = p.toLowerCase();
    add(byPath, lower, p);
    add(byName, lower.slice(lower.lastIndexOf('/') + 1), p);
  }
  return {
    byPathLower: (p) => byPath.get(p) ?? [],
    byNameLower: (n) => byName.get(n) ?? [],
  };
}
