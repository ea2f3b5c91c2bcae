// Shared pieces of the history tools: revision ids, the revision as tools show it, paths, the live
// note's bytes, versions' bytes and bounded diffs. Reads the vault only through ctx.vault.fs.
import { unifiedPatch } from '../../src/markdown/index.js';
import {
  isRefusal,
  resolveNotePath,
  type ToolContext,
  clampLimit,
  cursorCodec,
  isAgentActor,
  textWindow,
  type CursorCodec,
} from '../../src/sdk/index.js';
import type { HistoryTools } from '../../src/generated/history/index.js';
import { HISTORY, historySettings } from './recorder.js';
import type { HistorySettings } from './settings.js';
import { blob, inLineage, latest, revision, type RevisionRow } from './store.js';
import { historyRefusals } from './refusals.js';

export type RevisionOut = HistoryTools['list_revisions']['output']['revisions'][number];

export function settingsOf(ctx: ToolContext<unknown>): HistorySettings {
  return historySettings(ctx.settings as Record<string, unknown>);
}

/** Wait for revisions of writes still being stored (group commit), so a tool reads the store as it is. */
export async function settledStore(ctx: ToolContext<unknown>): Promise<void> {
  if (ctx.hasService(HISTORY)) await ctx.service(HISTORY).settled();
}

export const revisionId = (id: string | number): string => `rev-${id}`;

/** rev-<n> → n, or undefined for anything else (refused by the caller as unknown_revision). */
export function parseRevisionId(text: string): number | undefined {
  const m = /^rev-(\d{1,15})$/.exec(text.trim());
  return m ? Number(m[1]) : undefined;
}

/** A path as history keys it: a name without an extension is a note (`.md` added), as the notes tools do. */
export function historyPath(ctx: ToolContext<unknown>, input: string): string {
  const last = input.split('/').pop() ?? '';
  return ctx.vault.fs.checkPath(last.includes('.') ? input : `${input}.md`);
}

/**
 * The path the reading tools look up: the path as history keys it when it has revisions there; else a
 * note's link-style name resolved as the read tools resolve it (`Quarks` → `physics/Quarks.md`).
 * Restores and undos keep the exact path: a write never lands on a note the caller did not name.
 */
export async function historyReadPath(ctx: ToolContext<unknown>, input: string): Promise<string> {
  const exact = historyPath(ctx, input);
  if (!exact.toLowerCase().endsWith('.md') || (await latest(ctx.db, ctx.vault.id, exact))) return exact;
  return resolveNotePath(ctx, input);
}

export function toOut(ctx: ToolContext<unknown>, r: RevisionRow): RevisionOut {
  const agent = isAgentActor(r.actor_kind);
  return {
    revision: revisionId(r.id),
    kind: r.kind,
    at: new Date(r.at).toISOString(),
    path: r.path,
    from_path: r.from_path,
    content_hash: r.hash,
    previous_hash: r.previous_hash,
    size: r.size,
    skipped: r.skipped,
    by: agent || r.actor_kind === 'panel' ? r.actor_kind : 'human/sync',
    by_name: r.actor_name,
    credential: r.actor_id,
    user: r.user_name,
    client: r.client_name,
    client_id: r.client_id,
    tool: r.tool,
    event: r.event_id === null ? null : `ev:${r.event_id}`,
    you: agent && r.actor_id === ctx.principal.id,
  };
}

/**
 * The revision `id` of the note at `path` in the caller's vault — kept at that path or at one the note was
 * moved from — or unknown_revision (another vault's, another note's, pruned).
 */
export async function findRevision(ctx: ToolContext<unknown>, path: string, id: string): Promise<RevisionRow> {
  const n = parseRevisionId(id);
  const row = n === undefined ? undefined : await revision(ctx.db, ctx.vault.id, n);
  if (!row || (row.path !== path && !(await inLineage(ctx.db, ctx.vault.id, path, n!))))
    historyRefusals.refuse('unknown_revision', { path, revision: id });
  return row;
}

/** The bytes a revision names, or undefined when its version was skipped or pruned. */
export async function versionBytes(ctx: ToolContext<unknown>, row: RevisionRow): Promise<Buffer | undefined> {
  if (row.hash === null) return undefined;
  return blob(ctx.db, ctx.vault.id, row.hash);
}

/** The file at `path` now, or null when there is none. */
export async function currentBytes(ctx: ToolContext<unknown>, path: string, maxBytes: number): Promise<Buffer | null> {
  try {
    return await ctx.vault.fs.readBytes(path, { maxBytes });
  } catch (e) {
    if (isRefusal(e) && e.code === 'not_found') return null;
    throw e;
  }
}

const strict = new TextDecoder('utf-8', { fatal: true });

/** Text when the bytes are UTF-8 without NULs, else undefined (binary: summarised, never diffed). */
export function asText(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return strict.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Texts up to this size together are diffed on the event loop (a worker hop costs more than the diff). */
const INLINE_DIFF_CHARS = 32 * 1024;

/** A unified diff (the dry runs' helper; in the worker pool for large texts), cut at history.maxDiffChars. */
export async function boundedDiff(
  ctx: ToolContext<unknown>,
  path: string,
  before: string,
  after: string,
  window?: { offset: number; limit: number | undefined },
): Promise<{ diff: string; truncated: boolean; next_offset?: number | null }> {
  if (before === after) return { diff: '', truncated: false, ...(window ? { next_offset: null } : {}) };
  const diff =
    before.length + after.length <= INLINE_DIFF_CHARS
      ? unifiedPatch(path, before, after, 3)
      : await ctx.workers.run<string>('unified-diff', { path, before, after, context: 3 }, { signal: ctx.signal });
  const max = settingsOf(ctx).maxDiffChars;
  if (window) {
    // A window of the whole diff: the next window starts where this one ends, so no line is lost.
    const w = textWindow(diff, window.offset, clampLimit(window.limit, max));
    return { diff: w.content, truncated: w.next_offset !== null, next_offset: w.next_offset };
  }
  return diff.length > max
    ? { diff: `${diff.slice(0, max)}\n… (diff cut at history.maxDiffChars = ${max} characters)`, truncated: true }
    : { diff, truncated: false };
}

/** The listing tools' cursors: the id of the last revision shown (pages go to older ones). */
type PagedTool = 'list_revisions' | 'list_deleted_notes';
const isRevisionId = (v: unknown): v is string => typeof v === 'string' && /^\d{1,18}$/.test(v);
const cursors: Record<PagedTool, CursorCodec<string>> = {
  list_revisions: cursorCodec('list_revisions', isRevisionId),
  list_deleted_notes: cursorCodec('list_deleted_notes', isRevisionId),
};

export function cursorOf(
  ctx: ToolContext<unknown>,
  tool: PagedTool,
  rows: readonly RevisionRow[],
  limit: number,
): string | null {
  return rows.length > limit ? cursors[tool].encode(ctx, rows[limit - 1].id) : null;
}

export function parseCursor(ctx: ToolContext<unknown>, tool: PagedTool, cursor: string | undefined): number | null {
  const id = cursors[tool].decode(ctx, cursor);
  return id === undefined ? null : Number(id);
}
