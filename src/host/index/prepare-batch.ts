// A batch of changed paths made ready ahead of its commit: read with bounded concurrency, parsed in the
// pool with a failing note isolated, and handed to contributors' model-only prepare. Never writes, and
// never rejects for one note: a failure becomes that note's quarantine item.
import { mapLimit } from '../../sdk/map-limit.js';
import type { WorkerPool } from '../../sdk/types.js';
import { parseItems, prepareOne, unreadable, type Prepared } from './prepare.js';
import { brief } from './state.js';
import type { CachedNote, PipelineDeps } from './types.js';

/** Read (and parse what changed) for a batch of paths. Never rejects: failures become quarantine items. */
export async function prepareBatch(
  deps: PipelineDeps,
  cache: ReadonlyMap<string, CachedNote>,
  batch: ReadonlyArray<readonly [string, boolean]>,
): Promise<Prepared[]> {
  const { fs } = deps.vault;
  const s = deps.settings;
  const items = await mapLimit(batch, s.readConcurrency, ([p, force]) => {
    const base = cache.get(p)?.hash;
    return prepareOne(fs, p, s.maxNoteBytes, base, force).catch((e) => unreadable(p, base, e));
  });
  await parseBatch(deps.workers, items, s.parseTaskSize);
  prepareContributors(deps, items);
  return items;
}

/**
 * Contributors' model-only work for a parsed batch, done here while the batch before it is written (see
 * IndexContributor.prepare). A prepare that throws costs nothing but its time: write derives again.
 */
function prepareContributors(deps: PipelineDeps, items: readonly Prepared[]): void {
  const preparing = deps.contributors().filter((c) => c.contributor.prepare);
  if (preparing.length === 0) return;
  for (const it of items) {
    if (it.kind !== 'content' || !it.model) continue;
    for (const c of preparing) {
      try {
        c.contributor.prepare!(it.model);
      } catch (e) {
        deps.log.debug({ err: brief(e), path: it.path }, `contributor ${c.contributor.name} failed to prepare`);
      }
    }
  }
}

/** Parse `items` in place in the pool. Never rejects: a note whose parse fails becomes a quarantine item. */
export async function parseBatch(workers: WorkerPool, items: Prepared[], taskSize: number): Promise<void> {
  try {
    await parseItems(workers, items, taskSize);
  } catch {
    // One note may have crashed the task: parse the rest one by one so only it is quarantined.
    for (let i = 0; i < items.length; i++) {
      const it = items[i];
      if (it.kind !== 'content' || !it.bytes) continue;
      try {
        await parseItems(workers, [it], 1);
      } catch (e) {
        items[i] = {
          kind: 'quarantine',
          path: it.path,
          reason: `parse_failed: ${brief(e)}`,
          hash: it.hash,
          size: it.size,
          mtimeMs: it.mtimeMs,
          baseHash: it.baseHash,
        };
      }
    }
  }
}
