// write_file: put a non-note file into the vault, no-clobber by default, checked replace on request.
// Publishes only through ctx.vault.fs (create / replace); never writes markdown, never exceeds the cap.
import {
  createFileObserved,
  defineTool,
  isRefusal,
  replaceFileObserved,
  toolWriteScope,
  type ToolContext,
  type WriteResult,
} from '../../../src/sdk/index.js';
import { HASH_RE, formatBytes, isMarkdownPath, mimeOf } from '../kinds.js';
import type { FilesCtxSettings } from '../settings.js';
import type { FilesTools } from '../../../src/generated/files/index.js';
import { filesRefusals } from '../refusals.js';

type WriteFileInput = FilesTools['write_file']['input'];
type WriteFileOutput = FilesTools['write_file']['output'];

const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64URL_RE = /^[A-Za-z0-9_-]*$/;

/** Decoded size of a base64 string without decoding it (so an oversized write costs no allocation). */
export function base64DecodedSize(s: string): number {
  const len = s.replace(/\s+/g, '').length;
  const pad = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
  return Math.floor((len * 3) / 4) - pad;
}

function decode(input: WriteFileInput, path: string, limit: number, ctx: ToolContext<FilesCtxSettings>): Buffer {
  if ((input.encoding ?? 'base64') === 'text') {
    const size = Buffer.byteLength(input.content, 'utf8');
    if (size > limit) ctx.refuse('too_large', { path, size, limit, setting: 'files.maxWriteBytes' });
    return Buffer.from(input.content, 'utf8');
  }
  const size = base64DecodedSize(input.content);
  if (size > limit) ctx.refuse('too_large', { path, size, limit, setting: 'files.maxWriteBytes' });
  const compact = input.content.replace(/\s+/g, '');
  const url = !BASE64_RE.test(compact) && BASE64URL_RE.test(compact);
  if ((!BASE64_RE.test(compact) && !url) || (!url && compact.length % 4 !== 0)) {
    filesRefusals.refuse('invalid_content', {
      reason: 'content is not valid base64 (send encoding="text" for plain text)',
    });
  }
  return Buffer.from(compact, url ? 'base64url' : 'base64');
}

async function handler(input: WriteFileInput, ctx: ToolContext<FilesCtxSettings>): Promise<WriteFileOutput> {
  const expected = input.expected_hash;
  if (expected !== undefined && !HASH_RE.test(expected))
    ctx.refuse('malformed_precondition', { expectedHash: '(not echoed)' });
  const fs = ctx.vault.fs;
  const path = fs.checkPath(input.path);
  if (isMarkdownPath(path)) filesRefusals.refuse('markdown_not_allowed', { path, instead: 'create_note or edit_note' });
  if (expected !== undefined && !input.overwrite) {
    ctx.refuse('invalid_arguments', {
      problems: 'expected_hash applies only with overwrite=true (a new file has no bytes to compare)',
    });
  }
  const bytes = decode(input, path, ctx.settings.files.maxWriteBytes, ctx);
  const mime = mimeOf(path);
  const scope = toolWriteScope(ctx);
  let result: WriteResult;
  let created: boolean;
  if (!input.overwrite) {
    result = await createFileObserved(scope, path, bytes, ctx.log);
    created = true;
  } else {
    try {
      const refuseStale = (currentHash: string): never =>
        ctx.refuse('stale_precondition', { path, expectedHash: expected, currentHash });
      result = await replaceFileObserved(
        scope,
        path,
        bytes,
        { expectedHash: expected, maxReadBytes: ctx.settings.files.maxReadBytes, refuseStale },
        ctx.log,
      );
      created = false;
    } catch (e) {
      if (!isRefusal(e) || e.code !== 'not_found') throw e;
      result = await createFileObserved(scope, path, bytes, ctx.log);
      created = true;
    }
  }
  return {
    path: result.path,
    size: result.size,
    content_hash: result.contentHash,
    mime,
    created,
    previous_hash: result.previousHash ?? null,
  };
}

function render(o: WriteFileOutput): string {
  const verb = o.created ? 'Created' : 'Replaced';
  return `${verb} ${o.path} (${o.size} bytes, ${formatBytes(o.size)})\nmime: ${o.mime}\ncontent_hash: ${o.content_hash}${o.previous_hash ? `\nprevious_hash: ${o.previous_hash}` : ''}`;
}

const tool = defineTool<FilesTools['write_file']>({ handler, render });
export default tool;
