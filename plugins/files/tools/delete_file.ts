// delete_file: soft delete (to .trash/) or permanent unlink of one non-note file, optionally hash-guarded.
// Never deletes markdown, folders or symlinks; every mutation goes through ctx.vault.fs.
import { defineTool, observedWrite, writesObserved, type ToolContext } from '../../../src/sdk/index.js';
import { HASH_RE, isMarkdownPath } from '../kinds.js';
import type { FilesCtxSettings } from '../settings.js';
import type { FilesTools } from '../../../src/generated/files/index.js';
import { filesRefusals } from '../refusals.js';

type DeleteFileInput = FilesTools['delete_file']['input'];
type DeleteFileOutput = FilesTools['delete_file']['output'];

async function handler(input: DeleteFileInput, ctx: ToolContext<FilesCtxSettings>): Promise<DeleteFileOutput> {
  const expected = input.expected_hash;
  if (expected !== undefined && !HASH_RE.test(expected))
    ctx.refuse('malformed_precondition', { expectedHash: '(not echoed)' });
  const fs = ctx.vault.fs;
  const path = fs.checkPath(input.path);
  if (isMarkdownPath(path)) filesRefusals.refuse('markdown_not_allowed', { path, instead: 'delete_note' });
  const st = await fs.stat(path);
  if (st.kind === 'directory') ctx.refuse('is_directory', { path });
  if (st.kind === 'symlink')
    ctx.refuse('is_symlink', { path, target: st.linkInside ? st.linkTarget : '(outside the vault)' });
  const observed = writesObserved(ctx);
  let incumbent: { bytes: Buffer; hash: string } | undefined;
  if (expected !== undefined || observed) {
    const limit = ctx.settings.files.maxReadBytes;
    if (st.size > limit && expected !== undefined)
      ctx.refuse('precondition_unavailable', { path, size: st.size, limit });
    if (st.size <= limit) {
      const bytes = await fs.readBytes(path, { maxBytes: limit });
      incumbent = { bytes, hash: fs.contentHash(bytes) };
      if (expected !== undefined && incumbent.hash !== expected)
        ctx.refuse('stale_precondition', { path, expectedHash: expected, currentHash: incumbent.hash });
    }
  }
  // The write observers (history) get the bytes read above; a file over files.maxReadBytes goes without them.
  const intent = {
    kind: 'remove' as const,
    target: 'file' as const,
    path,
    permanent: input.permanent === true,
    ...(incumbent ? { incumbent } : {}),
  };
  if (input.permanent) {
    await observedWrite(ctx, intent, () => fs.unlink(path));
    return { path, permanent: true, trash_path: null, size: st.size };
  }
  const r = await observedWrite(ctx, intent, () => fs.trash(path));
  return { path, permanent: false, trash_path: r.trashPath, size: st.size };
}

function render(o: DeleteFileOutput): string {
  return o.permanent
    ? `Deleted ${o.path} permanently (${o.size} bytes).`
    : `Moved ${o.path} to ${o.trash_path} (${o.size} bytes); restore it by moving it back.`;
}

const tool = defineTool<FilesTools['delete_file']>({ handler, render });
export default tool;
