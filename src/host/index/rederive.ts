// Background re-derivation after a contributor's version bump (or for a newly enabled one): walks the
// notes it has not derived yet in id order, re-parses them and calls only that contributor. Runs when
// the change queue is empty; a note that changed meanwhile goes back to the queue instead.
import { FencedError } from '../cluster/fence.js';
import type { NoteModel } from '../../markdown/index.js';
import { mapLimit } from '../../sdk/map-limit.js';
import { parseItems, prepareOne, type Prepared } from './prepare.js';
import type { IndexPipeline } from './pipeline.js';
import { announceCommit, contributorKey } from './types.js';

/** Re-derive one batch for the first contributor with a backlog. False when there is nothing to do. */
export async function rederiveStep(p: IndexPipeline): Promise<boolean> {
  const job = p.versions.nextJob();
  if (!job || p.isClosed()) return false;
  const { db, vault, settings, workers } = p.deps;
  const rows = await db
    .selectFrom('notes')
    .select(['id', 'path', 'content_hash'])
    .where('vault_id', '=', vault.id)
    .where('id', '>', job.after)
    .where('id', '<=', job.through)
    .orderBy('id')
    .limit(settings.batchSize)
    .execute();
  if (rows.length === 0) {
    await p.lock(() => p.versions.advance(db, job.key, job.through));
    await p.versions.count(job.key);
    return true;
  }
  const items = await mapLimit(rows, settings.readConcurrency, (r) =>
    prepareOne(vault.fs, r.path, settings.maxNoteBytes, r.content_hash, true).catch(
      (): Prepared => ({ kind: 'gone', path: r.path, baseHash: r.content_hash }),
    ),
  );
  try {
    await parseItems(workers, items, settings.parseTaskSize);
  } catch (e) {
    p.fail('re-derive parse failed', e);
  }
  const lastId = Number(rows[rows.length - 1].id);
  await p.lock(async () => {
    const entry = p.deps.contributors().find((c) => contributorKey(c) === job.key);
    if (!entry || entry.contributor.version !== job.entry.contributor.version) return; // the next sync resets the job
    const work: Array<{ id: number; item: Extract<Prepared, { kind: 'content' }>; model: NoteModel }> = [];
    rows.forEach((r, i) => {
      const item = items[i];
      const cached = p.cache.get(r.path);
      if (
        item.kind === 'content' &&
        item.model &&
        item.hash === r.content_hash &&
        cached?.id === Number(r.id) &&
        cached.hash === item.hash
      ) {
        work.push({ id: Number(r.id), item, model: item.model });
      } else p.requeue(r.path);
    });
    const note = (w: (typeof work)[number]) => ({
      id: w.id,
      vaultId: vault.id,
      path: w.item.path,
      contentHash: w.item.hash,
      size: w.item.size,
      mtimeMs: w.item.mtimeMs,
    });
    try {
      await db.transaction().execute(async (trx) => {
        await p.deps.fence?.(trx);
        const k = entry.contributor;
        if (k.writeMany)
          await k.writeMany(
            trx,
            work.map((w) => ({ note: note(w), model: w.model })),
          );
        else for (const w of work) await k.write(trx, note(w), w.model);
        await p.versions.advance(trx, job.key, lastId);
      });
      announceCommit([entry], vault.id, (what, e) => p.fail(what, e));
    } catch (e) {
      if (e instanceof FencedError) throw e;
      for (const w of work) {
        try {
          await db.transaction().execute(async (trx) => {
            await p.deps.fence?.(trx);
            await entry.contributor.write(trx, note(w), w.model);
          });
          announceCommit([entry], vault.id, (what, e) => p.fail(what, e));
        } catch (e) {
          p.fail(`re-derive by ${job.key} failed for a note`, e);
        }
      }
      await p.versions.advance(db, job.key, lastId);
    }
  });
  await p.versions.count(job.key);
  return true;
}
