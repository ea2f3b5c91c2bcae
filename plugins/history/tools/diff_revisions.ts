// diff_revisions: a bounded unified diff between two kept versions, or a version and the note now.
import { defineTool, windowPaging } from '../../../src/sdk/index.js';
import type { HistoryTools } from '../../../src/generated/history/index.js';
import {
  asText,
  boundedDiff,
  currentBytes,
  findRevision,
  historyReadPath,
  settingsOf,
  settledStore,
  versionBytes,
} from '../lib.js';
import type { HistoryCtx } from '../settings.js';
import { historyRefusals } from '../refusals.js';
import { movedTo } from '../store.js';

/** The bytes of `rev` (a revision id or `current`), with its hash. */
async function side(
  ctx: HistoryCtx,
  path: string,
  rev: string,
): Promise<{ bytes: Buffer | null; hash: string | null; movedTo?: string }> {
  if (rev === 'current') {
    const bytes = await currentBytes(ctx, path, settingsOf(ctx).maxVersionBytes);
    if (bytes) return { bytes, hash: ctx.vault.fs.contentHash(bytes) };
    // A note moved away is compared with itself where it is now, not called deleted line by line.
    const moved = await movedTo(ctx.db, ctx.vault.id, path);
    const there = moved ? await currentBytes(ctx, moved, settingsOf(ctx).maxVersionBytes) : null;
    return there
      ? { bytes: there, hash: ctx.vault.fs.contentHash(there), movedTo: moved! }
      : { bytes: null, hash: null };
  }
  const row = await findRevision(ctx, path, rev);
  const bytes = await versionBytes(ctx, row);
  if (!bytes)
    historyRefusals.refuse(
      'unknown_revision',
      { path, revision: rev },
      `The content of revision "${rev}" of "${path}" is not kept (${row.skipped ?? 'pruned'}); it cannot be diffed.`,
    );
  return { bytes, hash: row.hash };
}

export default defineTool<HistoryTools['diff_revisions']>({
  async handler(input, ctx: HistoryCtx) {
    await settledStore(ctx);
    const path = await historyReadPath(ctx, input.path);
    const to = input.to ?? 'current';
    const a = await side(ctx, path, input.from);
    const b = await side(ctx, path, to);
    const moved = b.movedTo ?? a.movedTo;
    const base = {
      path,
      from: input.from,
      to,
      from_hash: a.hash,
      to_hash: b.hash,
      changed: a.hash !== b.hash,
      ...(moved ? { moved_to: moved } : {}),
    };
    const before = a.bytes ? asText(a.bytes) : '';
    const after = b.bytes ? asText(b.bytes) : '';
    if (before === undefined || after === undefined) {
      return {
        ...base,
        binary: true,
        truncated: false,
        next_offset: null,
        diff: `Binary content is not diffed: ${a.bytes?.length ?? 0} bytes (${a.hash ?? 'absent'}) → ${b.bytes?.length ?? 0} bytes (${b.hash ?? 'absent'}).`,
      };
    }
    const d = await boundedDiff(ctx, path, before, after, { offset: input.offset ?? 0, limit: input.limit });
    return { ...base, binary: false, ...d, next_offset: d.next_offset ?? null };
  },
  render(o) {
    const at = (side: string) =>
      side === 'current' && o.moved_to ? ` at ${o.moved_to}, where the note was moved` : '';
    const head = `${o.path}: ${o.from}${at(o.from)} (${o.from_hash ?? 'absent'}) → ${o.to}${at(o.to)} (${o.to_hash ?? 'absent'})`;
    if (!o.changed) return `${head}: no changes`;
    return `${head}\n\n${o.diff}${o.next_offset !== null ? `\n… more: offset=${o.next_offset}` : ''}`;
  },
  paging: windowPaging((o) => o.diff.length),
});
