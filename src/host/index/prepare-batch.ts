// A batch of changed paths made ready ahead of its commit: read with bounded concurrency, parsed in the
// pool with a failing note isolated, and handed to contributors' model-only prepare. Never writes, and
// never rejects for one note: a failure becomes that note's quarantine item.
import { setImmediate as yieldLoop } from 'node:timers/promises';
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
  await prepareContributors(deps, items);
  return items;
}

/**
 * The longest the main thread spends in contributors' prepare before it lets other work run. A batch's prepare
 * runs while the batch before it is committed: that commit's statements wait on the main thread between one
 * another, so a whole batch at once (~35 ms for 200 Chinese notes on a 2-core host) left the database thread
 * idle for it, and every tool call behind it.
 */
const PREPARE_SLICE_MS = 2;

/**
 * Contributors' model-only work for a parsed batch, done here while the batch before it is written (see
 * IndexContributor.prepare). A prepare that throws costs nothing but its time: write derives again.
 */
async function prepareContributors(deps: PipelineDeps, items: readonly Prepared[]): Promise<void> {
  const preparing = deps.contributors().filter((c) => c.contributor.prepare);
  if (preparing.length === 0) return;
  let slice = performance.now();
  for (const it of items) {
    if (performance.now() - slice > PREPARE_SLICE_MS) {
      await yieldLoop();
      slice = performance.now();
    }
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
