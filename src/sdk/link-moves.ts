// The one move-with-link-rewrite path for every family (move_note, move_file): scan the vault, plan the
// rewrites with the pure planner, then a no-replace rename and checked replaces with index write-through.
// Everything is planned before anything is written; after the rename, failures are partial success.
import { buildLinkIndex, parseNote, type NoteModel } from '../markdown/index.js';
import {
  linkNameKey,
  planLinkRewrites,
  type LeftAlone,
  type RewritePlan,
  type SourceNote,
} from '../markdown/rewrite-links.js';
import { originOf } from './define-family.js';
import type { IndexService } from './index-service.js';
import { mapLimit } from './map-limit.js';
import { Refusal, isRefusal } from './refusals.js';
import type { ToolContext } from './types.js';
import { observedWrite } from './write-path.js';
import { INDEX } from './services.js';

export interface MoveWithLinksOptions {
  from: string;
  to: string;
  rewriteLinks: boolean;
  dryRun: boolean;
  /** Notes larger than this are neither read for links nor rewritten. */
  maxNoteBytes: number;
  maxRewritesPerNote: number;
  /** Lines of context in dry-run diffs. */
  diffContext: number;
  /** Characters of dry-run diff returned. */
  maxDiffChars: number;
  /** The moved note as read under the caller's precondition (notes only). */
  moved?: { text: string; model: NoteModel };
}

export interface MoveWithLinksResult {
  moved: boolean;
  rewritten_links: number;
  rewritten_notes: Array<{ path: string; links: number }>;
  /** Links that could mean the moved file and were left alone (ambiguous, dangling, in code, ...). */
  left_alone: LeftAlone[];
  failures: Array<{ path: string; code: string; message: string }>;
  partial: boolean;
  /** Notes skipped by the scan (unreadable or over the size limit): their links were not looked at. */
  skipped: string[];
  diff?: string;
  /** content_hash of the moved note after its own links were rewritten, when they were. */
  moved_hash?: string;
}

/**
 * The text move_note and move_file answer with: the message, then what was rewritten, left alone (with
 * candidates) and failed, then the dry-run diff. One renderer, so the two tools report moves alike.
 */
export function renderMoveResult(
  o: { message: string; content_hash?: string | null } & Pick<
    MoveWithLinksResult,
    'rewritten_notes' | 'left_alone' | 'failures' | 'diff'
  >,
): string {
  const lines = [`${o.message}${o.content_hash ? ` — content_hash: ${o.content_hash}` : ''}`];
  for (const n of o.rewritten_notes.slice(0, 50)) lines.push(`- ${n.path}: ${n.links} link(s)`);
  for (const a of o.left_alone.slice(0, 30))
    lines.push(
      `- left alone (${a.reason.replace(/_/g, ' ')}): ${a.path} line ${a.line}: ${a.raw}${a.candidates?.length ? ` — candidates: ${a.candidates.join(', ')}` : ''}`,
    );
  if (o.left_alone.length > 30) lines.push(`- … and ${o.left_alone.length - 30} more left alone`);
  for (const f of o.failures) lines.push(`- failed: ${f.path} (${f.code})`);
  if (o.diff) lines.push('', o.diff);
  return lines.join('\n');
}

const isNote = (p: string): boolean => /\.md$/i.test(p);

function indexOf(ctx: ToolContext<unknown>): IndexService | undefined {
  return ctx.hasService(INDEX) ? ctx.service(INDEX) : undefined;
}

async function writeThrough(
  ctx: ToolContext<unknown>,
  what: string,
  run: (s: IndexService) => Promise<void>,
): Promise<void> {
  const s = indexOf(ctx);
  if (!s) return;
  try {
    await run(s);
  } catch (e) {
    // The bytes are published; a failed write-through only delays the index, the next pass catches up.
    ctx.log.warn({ err: e instanceof Error ? e.message : String(e) }, `index write-through failed after ${what}`);
  }
}

/** The index's hold on a move's paths (IndexService.hold); like a write-through, one that fails never fails the move. */
function holdForMove(ctx: ToolContext<unknown>, paths: readonly string[]): (() => void) | undefined {
  const s = indexOf(ctx);
  if (!s) return undefined;
  try {
    return s.hold(ctx.principal.vaultId, paths);
  } catch (e) {
    ctx.log.warn({ err: e instanceof Error ? e.message : String(e) }, 'index hold failed before a move');
    return undefined;
  }
}

/** Every vault file path and the notes whose text could hold a link to `from` or to `to`'s name. */
async function scan(
  ctx: ToolContext<unknown>,
  opts: MoveWithLinksOptions,
): Promise<{ files: string[]; sources: SourceNote[]; originals: Map<string, string>; skipped: string[] }> {
  const files: string[] = [];
  const notes: string[] = [];
  for await (const e of ctx.vault.fs.walk()) {
    if (ctx.signal.aborted) break;
    if (e.kind !== 'file') continue;
    files.push(e.path);
    if (isNote(e.path) && e.path !== opts.from) notes.push(e.path);
  }
  const needles = [
    ...new Set([linkNameKey(opts.from), linkNameKey(opts.to)].flatMap((k) => [k, encodeURIComponent(k).toLowerCase()])),
  ];
  const sources: SourceNote[] = [];
  const originals = new Map<string, string>();
  const skipped: string[] = [];
  if (opts.moved) {
    sources.push({ path: opts.from, text: opts.moved.text, model: opts.moved.model });
    originals.set(opts.from, opts.moved.text);
  }
  // Progress: reading every note is the first half of the work, rewriting the linking ones the second.
  const report = (done: number, total: number) =>
    ctx.client.progress((50 * done) / total, 100, 'reading notes for links');
  await mapLimit(
    notes,
    16,
    async (p) => {
      let text: string;
      try {
        text = await ctx.vault.fs.readText(p, { maxBytes: opts.maxNoteBytes });
      } catch (e) {
        if (!isRefusal(e)) throw e;
        skipped.push(p);
        return;
      }
      const lower = text.toLowerCase();
      if (!needles.some((k) => lower.includes(k))) return;
      sources.push({ path: p, text, model: parseNote(text, { path: p }) });
      originals.set(p, text);
    },
    { signal: ctx.signal, onDone: report },
  );
  sources.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files, sources, originals, skipped: skipped.sort() };
}

/**
 * Move `from` to `to` (the caller has checked both paths and the precondition) and, when asked, rewrite
 * every link that resolved to it. Refuses `already_exists` before anything changes, and `move_aborted`
 * when a rewrite would break a limit.
 */
export async function moveWithLinks(
  ctx: ToolContext<unknown>,
  opts: MoveWithLinksOptions,
): Promise<MoveWithLinksResult> {
  const { from, to } = opts;
  if (await ctx.vault.fs.exists(to)) throw new Refusal('already_exists', { path: to });
  const out: MoveWithLinksResult = {
    moved: false,
    rewritten_links: 0,
    rewritten_notes: [],
    left_alone: [],
    failures: [],
    partial: false,
    skipped: [],
  };
  let plans: RewritePlan[] = [];
  let originals = new Map<string, string>();
  if (opts.rewriteLinks) {
    const s = await scan(ctx, opts);
    originals = s.originals;
    out.skipped = s.skipped;
    const pre = buildLinkIndex(s.files);
    const post = buildLinkIndex([...s.files.filter((f) => f !== from), to]);
    const r = planLinkRewrites(from, to, s.sources, pre, post, opts.maxRewritesPerNote);
    if (r.problem) throw new Refusal('move_aborted', { reason: r.problem });
    for (const p of r.plans) {
      if (Buffer.byteLength(p.text) > opts.maxNoteBytes)
        throw new Refusal('move_aborted', {
          reason: `rewriting ${p.path} would push it over the note size limit (${opts.maxNoteBytes} bytes)`,
        });
    }
    plans = r.plans;
    out.left_alone = r.leftAlone;
    out.rewritten_links = r.total;
    out.rewritten_notes = r.plans.map((p) => ({ path: p.path === from ? to : p.path, links: p.count }));
  }
  if (opts.dryRun) {
    const diffs: string[] = [];
    for (const p of plans.slice(0, 20)) {
      diffs.push(
        await ctx.workers.run<string>(
          'unified-diff',
          { path: p.path, before: originals.get(p.path) ?? '', after: p.text, context: opts.diffContext },
          { signal: ctx.signal },
        ),
      );
    }
    out.diff = diffs.join('\n').slice(0, opts.maxDiffChars);
    return out;
  }
  await observedWrite(
    ctx,
    { kind: 'move', target: isNote(from) ? 'note' : 'file', path: from, toPath: to },
    async () => {
      // Held from before the rename until its write-through: an index pass that read the disk in between would
      // record our move as an outside removal and a creation.
      const release = isNote(from) ? holdForMove(ctx, [from, to]) : undefined;
      try {
        await ctx.vault.fs.move(from, to);
        if (isNote(from))
          await writeThrough(ctx, 'move', (s) => s.noteMoved(ctx.principal.vaultId, from, to, originOf(ctx.principal)));
      } finally {
        release?.();
      }
    },
  );
  out.moved = true;
  const rewriting = (done: number, total: number) =>
    ctx.client.progress(50 + (50 * done) / total, 100, 'rewriting links');
  await mapLimit(
    plans,
    8,
    async (p) => {
      const target = p.path === from ? to : p.path;
      try {
        const before = Buffer.from(originals.get(p.path) ?? '', 'utf8');
        const after = Buffer.from(p.text, 'utf8');
        const beforeHash = ctx.vault.fs.contentHash(before);
        const intent = {
          kind: 'replace' as const,
          target: 'note' as const,
          path: target,
          incumbent: { bytes: before, hash: beforeHash },
          next: { bytes: after, hash: ctx.vault.fs.contentHash(after) },
        };
        const w = await observedWrite(ctx, intent, async () => {
          const r = await ctx.vault.fs.replace(target, after, { expectedHash: beforeHash });
          await writeThrough(ctx, 'write', (s) =>
            s.noteWritten(ctx.principal.vaultId, target, originOf(ctx.principal)),
          );
          return r;
        });
        if (target === to) out.moved_hash = w.contentHash;
      } catch (e) {
        if (!isRefusal(e)) throw e;
        out.failures.push({
          path: target,
          code: e.code === 'stale_precondition' ? 'concurrent_write' : e.code,
          message: e.message,
        });
      }
    },
    { onDone: rewriting },
  );
  out.partial = out.failures.length > 0;
  if (out.partial) {
    const failed = new Set(out.failures.map((f) => f.path));
    out.rewritten_notes = out.rewritten_notes.filter((n) => !failed.has(n.path));
    out.rewritten_links = out.rewritten_notes.reduce((a, n) => a + n.links, 0);
  }
  return out;
}
