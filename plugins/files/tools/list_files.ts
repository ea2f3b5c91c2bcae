// list_files: an ls-style listing of one vault folder (optionally recursive), glob-filtered and capped.
// Hidden entries are never listed and symlinks are reported, not followed (the vault service enforces both).
import {
  defineTool,
  type ToolContext,
  type VaultEntry,
  printable,
  clampLimit,
  folderScope,
} from '../../../src/sdk/index.js';
import { formatBytes } from '../kinds.js';
import type { FilesCtxSettings } from '../settings.js';
import type { FilesTools } from '../../../src/generated/files/index.js';

type ListFilesInput = FilesTools['list_files']['input'];
type ListFilesOutput = FilesTools['list_files']['output'];

type Entry = ListFilesOutput['entries'][number];

/** A name-only pattern matches at any depth; one with a slash is matched against the relative path. */
export function effectivePattern(pattern: string): string | undefined {
  if (pattern === '*' || pattern === '**' || pattern === '**/*') return undefined;
  return pattern.includes('/') ? pattern : `**/${pattern}`;
}

async function handler(input: ListFilesInput, ctx: ToolContext<FilesCtxSettings>): Promise<ListFilesOutput> {
  // The listing names the vault root '.', as ls does; every other folder reads as the SDK's scope says.
  const scope = folderScope(input.folder);
  const folder = scope.folder === '' ? '.' : ctx.vault.fs.checkPath(scope.folder);
  const limit = clampLimit(input.limit, ctx.settings.files.maxListEntries, 200);
  const pattern = effectivePattern(input.pattern ?? '*');
  const offset = input.offset ?? 0;
  // The listing's order is stable (names sorted per folder, depth first), so an offset continues it.
  const raw: VaultEntry[] = (
    await ctx.vault.fs.list(folder, { recursive: input.recursive ?? false, pattern, limit: offset + limit + 1 })
  ).slice(offset);
  const truncated = raw.length > limit;
  const entries = raw.slice(0, limit).map((e): Entry => {
    const out: Entry = {
      path: e.path,
      kind: e.kind,
      size: e.kind === 'directory' ? 0 : e.size,
      mtime: new Date(e.mtimeMs).toISOString(),
    };
    if (e.kind === 'symlink' && e.linkTarget !== undefined)
      out.target = e.linkInside ? e.linkTarget : '(outside the vault)';
    return out;
  });
  return {
    folder,
    entries,
    count: entries.length,
    truncated,
    limit,
    offset,
    ...(truncated ? { next_offset: offset + entries.length } : {}),
  };
}

function render(o: ListFilesOutput): string {
  if (o.entries.length === 0) return `${o.folder}: no entries${o.offset ? ` after offset ${o.offset}` : ''}`;
  const lines = o.entries.map((e) => {
    const when = e.mtime.slice(0, 16).replace('T', ' ');
    const size = e.kind === 'directory' ? '-' : formatBytes(e.size);
    const name = printable(
      e.kind === 'directory' ? `${e.path}/` : e.kind === 'symlink' ? `${e.path} -> ${e.target ?? '?'}` : e.path,
    );
    return `${when}  ${size.padStart(9)}  ${name}`;
  });
  const tail = o.truncated
    ? `\n… more entries exist: listing stopped at limit=${o.limit}; continue with offset=${o.next_offset}`
    : '';
  return `${o.folder}: ${o.count} entries${o.offset ? ` from offset ${o.offset}` : ''}\n${lines.join('\n')}${tail}`;
}

const tool = defineTool<FilesTools['list_files']>({
  handler,
  render,
  // Over the result budget a page holds fewer entries; next_offset continues after the last one shown.
  paging: {
    limit: 'limit',
    size: (o) => o.count,
    next: (input, o) => (o.next_offset === undefined ? undefined : { ...input, offset: o.next_offset }),
  },
});
export default tool;
