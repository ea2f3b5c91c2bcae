// move_file: a no-replace rename of one non-note file plus, by default, the rewrite of every embed and
// link that resolved to it, through the SDK's moveWithLinks (the same path as move_note). Never moves notes.
import { defineTool, moveWithLinks, renderMoveResult, type ToolContext } from '../../../src/sdk/index.js';
import { HASH_RE, isMarkdownPath } from '../kinds.js';
import type { FilesCtxSettings } from '../settings.js';
import type { FilesTools } from '../../../src/generated/files/index.js';
import { filesRefusals } from '../refusals.js';

type MoveFileInput = FilesTools['move_file']['input'];
type MoveFileOutput = FilesTools['move_file']['output'];

async function handler(input: MoveFileInput, ctx: ToolContext<FilesCtxSettings>): Promise<MoveFileOutput> {
  const expected = input.expected_hash;
  if (expected !== undefined && !HASH_RE.test(expected))
    ctx.refuse('malformed_precondition', { expectedHash: '(not echoed)' });
  const fs = ctx.vault.fs;
  const from = fs.checkPath(input.from_path);
  const to = fs.checkPath(input.to_path);
  for (const p of [from, to])
    if (isMarkdownPath(p)) filesRefusals.refuse('markdown_not_allowed', { path: p, instead: 'move_note' });
  if (from === to) ctx.refuse('invalid_arguments', { problems: 'from_path and to_path name the same file' });
  const st = await fs.stat(from);
  if (st.kind === 'directory') ctx.refuse('is_directory', { path: from });
  if (st.kind === 'symlink')
    ctx.refuse('is_symlink', { path: from, target: st.linkInside ? st.linkTarget : '(outside the vault)' });
  const s = ctx.settings.files;
  let hash = '';
  if (st.size <= s.maxReadBytes) hash = fs.contentHash(await fs.readBytes(from, { maxBytes: s.maxReadBytes }));
  else if (expected !== undefined)
    ctx.refuse('precondition_unavailable', { path: from, size: st.size, limit: s.maxReadBytes });
  if (expected !== undefined && hash !== expected)
    ctx.refuse('stale_precondition', { path: from, expectedHash: expected, currentHash: hash });
  const rewrite = input.rewrite_links !== false;
  const dry = input.dry_run === true;
  const r = await moveWithLinks(ctx, {
    from,
    to,
    rewriteLinks: rewrite,
    dryRun: dry,
    maxNoteBytes: s.move.maxNoteBytes,
    maxRewritesPerNote: s.move.maxRewritesPerNote,
    diffContext: s.move.diffContext,
    maxDiffChars: s.textWindowChars,
  });
  const links = rewrite ? ` and rewrite ${r.rewritten_links} link(s) across ${r.rewritten_notes.length} note(s)` : '';
  const failed = r.failures
    .map((f) => f.path)
    .slice(0, 3)
    .join(', ');
  const message = dry
    ? `Dry run: would move ${from} → ${to}${links}; nothing was written`
    : `Moved ${from} → ${to}${rewrite ? ` — rewrote ${r.rewritten_links} link(s) across ${r.rewritten_notes.length} note(s)` : ''}${r.partial ? ` — partial success: links in ${failed} were not rewritten (the note changed meanwhile); the move itself stands` : ''}`;
  return {
    from,
    to,
    moved: r.moved,
    dry_run: dry,
    content_hash: hash,
    rewritten_links: r.rewritten_links,
    rewritten_notes: r.rewritten_notes,
    left_alone: r.left_alone,
    failures: r.failures,
    partial: r.partial,
    skipped: r.skipped,
    ...(r.diff !== undefined ? { diff: r.diff } : {}),
    message,
  };
}

const tool = defineTool<FilesTools['move_file']>({ handler, render: (o) => renderMoveResult(o) });
export default tool;
