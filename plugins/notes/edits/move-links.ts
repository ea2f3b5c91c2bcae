// Pure link rewriting for move_note: which links resolved to the moved note before the move, and the
// new text for each so it resolves to the new path after. Never rewrites a link it cannot prove.
import { resolveLink, type Link, type LinkIndex, type NoteModel } from '../../../src/markdown/index.js';
import { Refusal } from '../../../src/sdk/index.js';

export interface SourceNote { path: string; text: string; model: NoteModel }
export interface RewritePlan { path: string; text: string; count: number }
export interface AmbiguousLink { path: string; line: number; raw: string }

const dirname = (p: string): string => (p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '');
const stemOf = (p: string): string => p.slice(p.lastIndexOf('/') + 1).replace(/\.md$/i, '');

/** Relative path from folder `fromDir` to vault path `to`. */
export function relativePath(fromDir: string, to: string): string {
  const a = fromDir === '' ? [] : fromDir.split('/');
  const b = to.split('/');
  let i = 0;
  while (i < a.length && i < b.length - 1 && a[i] === b[i]) i++;
  return [...a.slice(i).map(() => '..'), ...b.slice(i)].join('/');
}

function encodeHref(p: string): string {
  return p.split('/').map((s) => encodeURIComponent(s).replace(/%2F/g, '/')).join('/');
}

/** New raw text for one link so it points at `to` from source `srcNew`, or null when it cannot be built. */
function rewriteLink(link: Link, to: string, srcNew: string, post: LinkIndex): string | null {
  const raw = link.raw;
  if (link.kind === 'markdown') {
    const open = raw.lastIndexOf('](');
    if (open < 0 || !raw.endsWith(')')) return null;
    const inner = raw.slice(open + 2, -1);
    const angle = inner.startsWith('<');
    const hrefEnd = angle ? inner.indexOf('>') + 1 : (/\s/.exec(inner)?.index ?? inner.length);
    if (angle && hrefEnd <= 0) return null;
    const href = angle ? inner.slice(1, hrefEnd - 1) : inner.slice(0, hrefEnd);
    const hash = href.indexOf('#');
    const anchor = hash >= 0 ? href.slice(hash) : '';
    const target = hash >= 0 ? href.slice(0, hash) : href;
    let rel = relativePath(dirname(srcNew), to);
    if (!/\.md$/i.test(decodeSafe(target))) rel = rel.replace(/\.md$/i, '');
    const newHref = (angle ? `<${rel}` : encodeHref(rel)) + anchor + (angle ? '>' : '');
    return raw.slice(0, open + 2) + newHref + inner.slice(hrefEnd) + ')';
  }
  const start = raw.indexOf('[[') + 2;
  const close = raw.lastIndexOf(']]');
  if (start < 2 || close < start) return null;
  const inner = raw.slice(start, close);
  const cut = inner.search(/[#|]/);
  const written = cut < 0 ? inner : inner.slice(0, cut);
  const rest = cut < 0 ? '' : inner.slice(cut);
  const pathStyle = written.includes('/') || /\.md$/i.test(written.trim());
  let target: string;
  if (pathStyle) target = /\.md$/i.test(written.trim()) ? to : to.replace(/\.md$/i, '');
  else {
    target = stemOf(to);
    const check = resolveLink(target, srcNew, post);
    if (check.resolved !== to || check.ambiguous) target = to.replace(/\.md$/i, '');
  }
  return raw.slice(0, start) + target + rest + raw.slice(close);
}

function decodeSafe(s: string): string {
  try { return decodeURIComponent(s); } catch { return s; }
}

/**
 * Plan every rewrite: links in `sources` that resolved (unambiguously) to `from` under `pre` get new text
 * resolving to `to` under `post`; in the moved note itself, relative links to other notes are re-aimed
 * from its new folder. Ambiguous links that could mean the moved note are reported and left alone.
 */
export function planLinkRewrites(from: string, to: string, sources: SourceNote[], pre: LinkIndex, post: LinkIndex, maxPerNote: number): { plans: RewritePlan[]; ambiguous: AmbiguousLink[]; total: number } {
  const plans: RewritePlan[] = [];
  const ambiguous: AmbiguousLink[] = [];
  let total = 0;
  for (const src of sources) {
    const srcNew = src.path === from ? to : src.path;
    const edits: Array<{ start: number; end: number; text: string }> = [];
    for (const link of src.model.links) {
      if (link.target === '' || link.embed && /\.(png|jpe?g|gif|webp|svg|pdf)$/i.test(link.target)) continue;
      const r = resolveLink(link.target, src.path, pre);
      if (r.resolved === null) continue;
      if (r.ambiguous) {
        if (r.candidates.includes(from)) ambiguous.push({ path: src.path, line: link.line, raw: link.raw.slice(0, 200) });
        continue;
      }
      const wanted = r.resolved === from ? to : r.resolved;
      if (r.resolved !== from && src.path !== from) continue;
      const after = resolveLink(link.target, srcNew, post);
      if (after.resolved === wanted && !after.ambiguous) continue;
      const text = rewriteLink(link, wanted, srcNew, post);
      if (text === null || text === link.raw) continue;
      edits.push({ start: link.start, end: link.end, text });
    }
    if (edits.length === 0) continue;
    if (edits.length > maxPerNote) throw new Refusal('move_aborted', { reason: `${src.path} would need ${edits.length} rewrites, over move.maxRewritesPerNote (${maxPerNote})` });
    edits.sort((a, b) => a.start - b.start);
    for (let i = 1; i < edits.length; i++) {
      if (edits[i].start < edits[i - 1].end) throw new Refusal('move_aborted', { reason: `two links overlap in ${src.path}` });
    }
    let bytes = Buffer.from(src.text, 'utf8');
    for (let i = edits.length - 1; i >= 0; i--) {
      const e = edits[i];
      bytes = Buffer.concat([bytes.subarray(0, e.start), Buffer.from(e.text, 'utf8'), bytes.subarray(e.end)]);
    }
    plans.push({ path: src.path, text: bytes.toString('utf8'), count: edits.length });
    total += edits.length;
  }
  return { plans, ambiguous, total };
}
