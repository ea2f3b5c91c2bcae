// restore_revision: put a kept version back through the one note-write path (itself a revision, indexed,
// attributed), with expected_hash and dry_run. Never overwrites a note this history has not seen
// unless the caller names its hash.
import { defineTool, NOTE_WRITER, windowPaging } from '../../../src/sdk/index.js';
import type { HistoryTools } from '../../../src/generated/history/index.js';
import { asText, boundedDiff, findRevision, historyPath, revisionId, versionBytes, settledStore } from '../lib.js';
import { knownHash } from '../store.js';
import type { HistoryCtx } from '../settings.js';
import { historyRefusals } from '../refusals.js';

export default defineTool<HistoryTools['restore_revision']>({
  async handler(input, ctx: HistoryCtx) {
    await settledStore(ctx);
    const writer = ctx.service(NOTE_WRITER);
    writer.checkHash(ctx, input.expected_hash);
    const path = historyPath(ctx, input.path);
    const row = await findRevision(ctx, path, input.revision);
    const revision = revisionId(row.id);
    if (row.target !== 'note') ctx.refuse('not_a_note', { path, instead: 'read_revision and write_file' });
    const bytes = await versionBytes(ctx, row);
    if (!bytes)
      historyRefusals.refuse(
        'unknown_revision',
        { path, revision },
        `The content of revision "${revision}" of "${path}" is not kept (${row.skipped ?? 'pruned'}); it cannot be restored.`,
      );
    const text = asText(bytes);
    if (text === undefined) ctx.refuse('not_utf8', { path, offset: 0 });
    const dry = input.dry_run === true;
    // A dry run's diff comes in windows like diff_revisions'; a write has no diff to window.
    const window = { offset: input.offset ?? 0, limit: input.limit };
    if (!(await ctx.vault.fs.exists(path))) {
      if (input.expected_hash !== undefined) ctx.refuse('no_incumbent', { path });
      const body = writer.checkSize(ctx, path, text);
      if (dry) {
        const d = await boundedDiff(ctx, path, '', text, window);
        return {
          path,
          revision,
          dry_run: true,
          changed: true,
          created: true,
          content_hash: null,
          previous_hash: null,
          ...d,
          next_offset: d.next_offset ?? null,
          message: `Dry run: restoring ${revision} would re-create ${path}; nothing was written`,
        };
      }
      const r = await writer.create(ctx, path, body);
      return {
        path,
        revision,
        dry_run: false,
        changed: true,
        created: true,
        content_hash: r.contentHash,
        previous_hash: null,
        message: `Re-created ${path} from ${revision}`,
      };
    }
    const note = await writer.read(ctx, path, input.expected_hash);
    if (input.expected_hash === undefined && !(await knownHash(ctx.db, ctx.vault.id, path, note.hash))) {
      ctx.refuse(
        'already_exists',
        { path },
        `"${path}" now holds a note this history has never seen (${note.hash}); nothing was restored. Pass expected_hash: "${note.hash}" to replace it, or restore elsewhere after moving it.`,
      );
    }
    if (note.hash === row.hash)
      return {
        path,
        revision,
        dry_run: dry,
        changed: false,
        created: false,
        content_hash: note.hash,
        previous_hash: note.hash,
        ...(dry ? { diff: '', next_offset: null } : {}),
        message: `${path} already has the content of ${revision}; nothing was written`,
      };
    const body = writer.checkSize(ctx, path, text);
    if (dry) {
      const d = await boundedDiff(ctx, path, note.text, text, window);
      return {
        path,
        revision,
        dry_run: true,
        changed: true,
        created: false,
        content_hash: note.hash,
        previous_hash: note.hash,
        ...d,
        next_offset: d.next_offset ?? null,
        message: `Dry run: restoring ${revision} would change ${path}; nothing was written`,
      };
    }
    const r = await writer.replace(ctx, note, body);
    return {
      path,
      revision,
      dry_run: false,
      changed: true,
      created: false,
      content_hash: r.contentHash,
      previous_hash: note.hash,
      message: `Restored ${path} to ${revision}`,
    };
  },
  render(o) {
    const head = `${o.message} — content_hash: ${o.content_hash ?? 'none'}`;
    if (o.diff === undefined) return head;
    const more = typeof o.next_offset === 'number' ? `\n… more: offset=${o.next_offset}` : '';
    return `${head}\n\n${o.diff === '' ? '(no changes)' : o.diff}${more}`;
  },
  // Only a dry run shrinks (a shorter window of its diff); a restore's answer is never run twice.
  paging: windowPaging((o) => (o.dry_run ? (o.diff?.length ?? 0) : 0)),
});
