// Note listings with keyset paging: from the index's notes table when the index service is present,
// else from a filesystem walk (titles are file stems then). Read-only; cursors are the SDK's bound codec.
import { sql } from 'kysely';
import {
  indexLag,
  printable,
  type ResultPaging,
  clampLimit,
  cursorCodec,
  folderScope,
  underFolder,
} from '../../../src/sdk/index.js';
import type { NotesTools } from '../../../src/generated/notes/index.js';
import type { NotesCtx } from '../settings.js';
import { deepLink } from './note-io.js';
import { indexService } from './write-safety.js';

export type ListQuery = NotesTools['list_notes']['input'];
export type ListResult = NotesTools['list_notes']['output'];
export type ListedNote = ListResult['notes'][number];
export type OrderBy = NonNullable<ListQuery['order_by']>;

/** The keyset position after a page: the order column's value and the path of its last note. */
interface Cursor {
  v: string;
  p: string;
}

const cursors = cursorCodec(
  'list_notes',
  (c): c is Cursor =>
    typeof c === 'object' && c !== null && typeof (c as Cursor).v === 'string' && typeof (c as Cursor).p === 'string',
);

function parseTime(ctx: NotesCtx, name: string, v: string | undefined): Date | undefined {
  if (v === undefined) return undefined;
  const d = new Date(v);
  if (Number.isNaN(d.getTime()))
    ctx.refuse('invalid_arguments', { problems: `${name} must be an ISO-8601 date or time` });
  return d;
}

function tagStrings(v: unknown): string[] {
  if (!Array.isArray(v)) return [];
  return v
    .map((t) =>
      typeof t === 'string'
        ? t
        : typeof t === 'object' && t !== null
          ? String((t as { display?: string; tag?: string }).display ?? (t as { tag?: string }).tag ?? '')
          : '',
    )
    .filter(Boolean);
}

export async function listNotes(ctx: NotesCtx, q: ListQuery): Promise<ListResult> {
  const s = ctx.settings.notes.list;
  const limit = clampLimit(q.limit, s.maxLimit, s.defaultLimit);
  const order: OrderBy = q.order_by ?? 'modified';
  const scope = folderScope(q.folder);
  const prefix = scope.prefix;
  const since = parseTime(ctx, 'since', q.since);
  const until = parseTime(ctx, 'until', q.until);
  const cursor = cursors.decode(ctx, q.cursor);
  const idx = indexService(ctx);
  let rows: ListedNote[];
  let source: ListResult['source'];
  let notice: string | undefined;
  if (idx) {
    source = 'index';
    const st = idx.status(ctx.principal.vaultId);
    notice = indexLag(st)?.notice;
    const col =
      order === 'path'
        ? sql.ref('path')
        : order === 'content_changed'
          ? sql.ref('content_changed_at')
          : sql.ref('mtime');
    const timeCol = order === 'content_changed' ? sql.ref('content_changed_at') : sql.ref('mtime');
    const keyset = cursor
      ? order === 'path'
        ? sql`AND path > ${cursor.p}`
        : sql`AND (${col}, path) < (${new Date(cursor.v)}, ${cursor.p})`
      : sql``;
    const dir = order === 'path' ? sql`ASC` : sql`DESC`;
    const r = await sql<{
      path: string;
      title: string;
      tags: unknown;
      size: number;
      mtime: Date;
      content_changed_at: Date;
    }>`
      SELECT path, title, tags, size, mtime, content_changed_at FROM notes
      WHERE vault_id = ${ctx.principal.vaultId} AND ${underFolder(sql`path`, scope)}
      ${since ? sql`AND ${timeCol} >= ${since}` : sql``} ${until ? sql`AND ${timeCol} < ${until}` : sql``}
      ${keyset}
      ORDER BY ${col} ${dir}, path ${dir} LIMIT ${limit + 1}`.execute(ctx.db);
    rows = r.rows.map((x) => ({
      path: x.path,
      title: x.title,
      tags: tagStrings(x.tags),
      size: Number(x.size),
      modified: new Date(x.mtime).toISOString(),
      content_changed: new Date(x.content_changed_at).toISOString(),
    }));
  } else {
    source = 'filesystem';
    notice =
      'The index is not available; this list comes from the filesystem (titles are file names, order_by content_changed uses modification time).';
    const all: ListedNote[] = [];
    for await (const e of ctx.vault.fs.walk()) {
      if (e.kind !== 'file' || !/\.md$/i.test(e.path) || !e.path.startsWith(prefix)) continue;
      if (since && e.mtimeMs < since.getTime()) continue;
      if (until && e.mtimeMs >= until.getTime()) continue;
      all.push({
        path: e.path,
        title: e.path.slice(e.path.lastIndexOf('/') + 1).replace(/\.md$/i, ''),
        tags: [],
        size: e.size,
        modified: new Date(e.mtimeMs).toISOString(),
      });
    }
    const key = (n: ListedNote): string => (order === 'path' ? n.path : n.modified);
    all.sort((a, b) =>
      order === 'path'
        ? a.path < b.path
          ? -1
          : a.path > b.path
            ? 1
            : 0
        : key(b).localeCompare(key(a)) || (b.path < a.path ? -1 : b.path > a.path ? 1 : 0),
    );
    const after = cursor
      ? all.filter((n) =>
          order === 'path'
            ? n.path > cursor.p
            : n.modified < cursor.v || (n.modified === cursor.v && n.path < cursor.p),
        )
      : all;
    rows = after.slice(0, limit + 1);
  }
  const more = rows.length > limit;
  const notes = rows.slice(0, limit).map((n) => {
    const link = deepLink(ctx, n.path);
    return link ? { ...n, deep_link: link } : n;
  });
  const last = notes[notes.length - 1];
  const next =
    more && last
      ? cursors.encode(ctx, {
          v: order === 'content_changed' ? (last.content_changed ?? last.modified) : last.modified,
          p: last.path,
        })
      : undefined;
  return { notes, ...(next ? { next_cursor: next } : {}), source, order_by: order, ...(notice ? { notice } : {}) };
}

export function renderList(title: string, o: ListResult): string {
  const lines = [`${title} (${o.notes.length}${o.next_cursor ? '+' : ''}, by ${o.order_by}, from the ${o.source}):`];
  for (const n of o.notes)
    lines.push(
      `- ${printable(n.path)} — ${printable(n.title)}${n.tags.length ? ` [${printable(n.tags.join(', '))}]` : ''} (${n.size} B, modified ${n.modified.slice(0, 16).replace('T', ' ')})`,
    );
  if (o.notes.length === 0) lines.push('(none)');
  if (o.next_cursor) lines.push(`more: cursor=${o.next_cursor}`);
  if (o.notice) lines.push(o.notice);
  return lines.join('\n');
}

/** Over the result budget a page holds fewer notes; next_cursor continues after the last one shown. */
export const listPaging: ResultPaging<ListQuery, ListResult> = {
  limit: 'limit',
  size: (o) => o.notes.length,
  next: (input, o) => (o.next_cursor ? { ...input, cursor: o.next_cursor } : undefined),
};
