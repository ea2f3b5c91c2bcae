// Turns prepared items into database operations against what the index holds now: unchanged bytes
// are skipped (or only their mtime refreshed), a hash vanishing and appearing in one batch is a rename,
// and an item whose base moved on meanwhile is handed back for another read. Pure: no I/O.
import type { Prepared } from './prepare.js';
import type { Op } from './store.js';
import type { CachedNote, QuarantinedNote } from './types.js';

export interface Decision {
  readonly ops: Op[];
  /** Paths read against a stale base: read them again. */
  readonly redo: string[];
  /** Items that needed no write. */
  readonly unchanged: number;
}

export function decide(
  items: readonly Prepared[],
  cache: ReadonlyMap<string, CachedNote>,
  quarantine: ReadonlyMap<string, QuarantinedNote>,
  moves: ReadonlyMap<string, string> = new Map(),
): Decision {
  const ops: Op[] = [];
  const redo: string[] = [];
  let unchanged = 0;
  const gone = new Map<string, CachedNote>();
  const fresh: Array<Extract<Prepared, { kind: 'content' }>> = [];
  for (const item of items) {
    const cur = cache.get(item.path);
    if (cur?.hash !== item.baseHash) {
      redo.push(item.path);
      continue;
    }
    if (item.kind === 'gone') {
      if (cur) gone.set(item.path, cur);
      else if (quarantine.has(item.path)) ops.push({ op: 'unquarantine', path: item.path });
      else unchanged++;
    } else if (item.kind === 'quarantine') {
      const q = quarantine.get(item.path);
      if (
        !cur &&
        q &&
        q.reason === item.reason &&
        q.hash === item.hash &&
        q.size === item.size &&
        q.mtimeMs === item.mtimeMs
      )
        unchanged++;
      else
        ops.push({
          op: 'quarantine',
          path: item.path,
          reason: item.reason,
          hash: item.hash,
          size: item.size,
          mtimeMs: item.mtimeMs,
          prev: cur,
        });
    } else if (!item.model) {
      if (cur && (cur.size !== item.size || cur.mtimeMs !== item.mtimeMs))
        ops.push({ op: 'touch', path: item.path, size: item.size, mtimeMs: item.mtimeMs, prev: cur });
      else unchanged++;
    } else fresh.push(item);
  }
  const byHash = new Map<string, string[]>();
  for (const [p, c] of gone) byHash.set(c.hash, [...(byHash.get(c.hash) ?? []), p]);
  const take = (from: string) => {
    const c = gone.get(from);
    if (!c) return undefined;
    gone.delete(from);
    const list = byHash.get(c.hash) ?? [];
    byHash.set(
      c.hash,
      list.filter((x) => x !== from),
    );
    return c;
  };
  for (const item of fresh) {
    const cur = cache.get(item.path);
    const model = item.model!;
    const facts = { path: item.path, hash: item.hash, size: item.size, mtimeMs: item.mtimeMs };
    const hinted = moves.get(item.path);
    const from = hinted !== undefined && gone.has(hinted) ? hinted : !cur ? byHash.get(item.hash)?.[0] : undefined;
    const prev = from !== undefined ? take(from) : undefined;
    if (from !== undefined && prev) ops.push({ op: 'rename', from, prev, replaces: cur, model, ...facts });
    else ops.push({ op: 'upsert', model, prev: cur, ...facts });
  }
  for (const [path, prev] of gone) ops.push({ op: 'remove', path, prev });
  return { ops, redo, unchanged };
}
