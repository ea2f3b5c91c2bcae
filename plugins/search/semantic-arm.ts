// The semantic arm shared by semantic_search and hybrid_search: availability, query embedding and the
// nearest-notes query, with every failure turned into a reason string (never a silent empty page).
import { EMBEDDINGS, type ToolContext } from '../../src/sdk/index.js';
import type { EmbeddingCounts, NearestNote } from './embeddings/types.js';
import type { SearchFilters } from './filters.js';
import type { SearchSettingsSection } from './settings.js';

export type SemanticArm =
  | { readonly ok: true; readonly rows: NearestNote[]; readonly counts: EmbeddingCounts }
  | { readonly ok: false; readonly reason: string; readonly counts: EmbeddingCounts };

const NO_COUNTS: EmbeddingCounts = { embedded: 0, queued: 0, stale: 0, failing: 0, lastError: null };

export async function semanticArm(
  ctx: ToolContext<SearchSettingsSection>,
  query: string,
  filters: SearchFilters,
  k: number,
): Promise<SemanticArm> {
  if (!ctx.hasService(EMBEDDINGS))
    return { ok: false, reason: 'the embeddings service is not running', counts: NO_COUNTS };
  const svc = ctx.service(EMBEDDINGS);
  const counts = await svc.counts(ctx.vault.id).catch(() => NO_COUNTS);
  const avail = svc.availability();
  if (!avail.ok) return { ok: false, reason: avail.reason, counts };
  let vector: number[];
  try {
    vector = await svc.embedQuery(query, ctx.signal);
  } catch (e) {
    return { ok: false, reason: `embedding provider failed: ${e instanceof Error ? e.message : String(e)}`, counts };
  }
  if (counts.embedded === 0)
    return {
      ok: false,
      reason: counts.queued ? `no note embedded yet (${counts.queued} queued)` : 'no note embedded yet',
      counts,
    };
  try {
    return { ok: true, rows: await svc.nearestNotes(ctx.vault.id, { vector }, k, filters), counts };
  } catch (e) {
    return { ok: false, reason: `vector query failed: ${e instanceof Error ? e.message : String(e)}`, counts };
  }
}

/** `§ "Parent/Child" (#N)`, `§ (top of note)`, or null for a stale row. */
export function sectionLocator(row: NearestNote): string | null {
  if (row.stale) return null;
  return row.sectionOrdinal > 0 ? `§ ${JSON.stringify(row.headingPath)} (#${row.sectionOrdinal})` : '§ (top of note)';
}
