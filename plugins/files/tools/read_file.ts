// read_file: one vault file as windowed text, an MCP image block, or base64 with a header.
// Reads only through ctx.vault.fs with the read cap; never returns more than one window of bytes.
import { defineTool, type ContentBlock, type ToolContext } from '../../../src/sdk/index.js';
import { classify, formatBytes, mimeOf } from '../kinds.js';
import type { FilesCtxSettings } from '../settings.js';
import type { FilesTools } from '../../../src/generated/files/index.js';

type ReadFileInput = FilesTools['read_file']['input'];
type ReadFileOutput = FilesTools['read_file']['output'];

/** Image bytes travel only in the image block, never twice: kept beside the output, not in it. */
const imageData = new WeakMap<ReadFileOutput, string>();
const DECODER = new TextDecoder('utf-8', { fatal: true });

function firstBadUtf8(bytes: Uint8Array): number {
  let lo = 0;
  let hi = bytes.length;
  // Binary search for the shortest invalid prefix; a cut inside a sequence at the end is also invalid,
  // so probe with `stream: true` which tolerates an incomplete tail.
  const probe = new TextDecoder('utf-8', { fatal: true });
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    try {
      probe.decode(bytes.subarray(0, mid + 1), { stream: true });
      lo = mid + 1;
    } catch {
      hi = mid;
    }
  }
  return lo;
}

async function handler(input: ReadFileInput, ctx: ToolContext<FilesCtxSettings>): Promise<ReadFileOutput> {
  const s = ctx.settings.files;
  const fs = ctx.vault.fs;
  const path = fs.checkPath(input.path);
  const st = await fs.stat(path).catch(() => undefined);
  if (st?.kind === 'directory') ctx.refuse('is_directory', { path });
  const bytes = await fs.readBytes(path, { maxBytes: s.maxReadBytes });
  const head = {
    path,
    size: bytes.length,
    content_hash: fs.contentHash(bytes),
    ...(st && st.kind !== 'symlink' ? { mtime: new Date(st.mtimeMs).toISOString() } : {}),
  };
  if (input.hash_only) return { ...head, kind: 'hash', mime: mimeOf(path), encoding: 'none' };

  const { kind, mime } = classify(path, bytes);
  const encoding = input.encoding ?? 'auto';
  const offset = input.offset ?? 0;
  if (encoding === 'text' || (encoding === 'auto' && kind === 'text')) {
    let text: string;
    try {
      text = DECODER.decode(bytes);
    } catch {
      ctx.refuse('not_utf8', { path, offset: firstBadUtf8(bytes) });
    }
    const limit = input.limit ?? s.textWindowChars;
    const start = Math.min(offset, text.length);
    let end = Math.min(text.length, start + limit);
    // Never cut a surrogate pair in half.
    if (end < text.length && end > start && /[\ud800-\udbff]/.test(text[end - 1])) end--;
    const truncated = end < text.length;
    return {
      ...head,
      kind: 'text',
      mime,
      encoding: 'text',
      offset: start,
      returned: end - start,
      total: text.length,
      truncated,
      next_offset: truncated ? end : null,
      content: text.slice(start, end),
    };
  }
  if (encoding === 'auto' && kind === 'image') {
    const out: ReadFileOutput = { ...head, kind: 'image', mime, encoding: 'image' };
    imageData.set(out, bytes.toString('base64'));
    return out;
  }
  const limit = input.limit ?? bytes.length;
  const start = Math.min(offset, bytes.length);
  const end = Math.min(bytes.length, start + limit);
  const truncated = end < bytes.length;
  return {
    ...head,
    kind: kind === 'image' ? 'image' : kind === 'text' ? 'text' : 'binary',
    mime,
    encoding: 'base64',
    offset: start,
    returned: end - start,
    total: bytes.length,
    truncated,
    next_offset: truncated ? end : null,
    content: bytes.subarray(start, end).toString('base64'),
  };
}

function render(o: ReadFileOutput): string {
  const header = `${o.path}\nmime: ${o.mime}\nbytes: ${o.size} (${formatBytes(o.size)})\ncontent_hash: ${o.content_hash}${o.mtime ? `\nmtime: ${o.mtime}` : ''}`;
  if (o.encoding === 'none') return header;
  if (o.encoding === 'image') return `${header}\n(image attached below)`;
  const unit = o.encoding === 'text' ? 'chars' : 'bytes';
  const window = `window: ${o.offset}–${(o.offset ?? 0) + (o.returned ?? 0)} of ${o.total} ${unit}`;
  const more = o.truncated ? `\ntruncated: true — continue with offset=${o.next_offset}` : '';
  const label = o.encoding === 'base64' ? 'base64:' : '---';
  return `${header}\n${window}${more}\n${label}\n${o.content ?? ''}`;
}

function content(o: ReadFileOutput): ContentBlock[] {
  const data = imageData.get(o);
  return data ? [{ type: 'image', data, mimeType: o.mime }] : [];
}

const tool = defineTool<FilesTools['read_file']>({
  handler,
  render,
  content,
  // Over the result budget the window narrows (characters of text, bytes of base64); next_offset continues.
  paging: {
    limit: 'limit',
    size: (o) => o.returned ?? 0,
    next: (input, o) =>
      o.truncated && typeof o.next_offset === 'number' ? { ...input, offset: o.next_offset } : undefined,
  },
});
export default tool;
