// VectorSearch: nearest notes by their best chunk. One interface; today one strategy, an exact scan
// (DISTINCT ON note over `<=>`), chosen by measurement (see docs/search.md). Callers never branch on it.
import { sql } from 'kysely';
import type { Database } from '../../../src/sdk/index.js';
import { filterSql, type SearchFilters } from '../filters.js';
import type { NearestNote } from './types.js';

export interface VectorSearch {
  readonly strategy: string;
  nearest(vaultId: number, vector: number[] | { noteId: number }, k: number, filters: SearchFilters): Promise<NearestNote[]>;
}

export function toVectorLiteral(v: readonly number[]): string {
  return `[${v.map((x) => (Number.isFinite(x) ? x : 0)).join(',')}]`;
}

export function exactVectorSearch(db: Database): VectorSearch {
  return {
    strategy: 'exact',
    async nearest(vaultId, target, k, filters) {
      const f = filterSql(filters);
      const isNote = !Array.isArray(target);
      const vec = isNote
        ? sql`(SELECT avg(embedding) FROM search_chunks WHERE note_id = ${(target as { noteId: number }).noteId})`
        : sql`${toVectorLiteral(target as number[])}::vector`;
      const exclude = isNote ? sql` AND c.note_id <> ${(target as { noteId: number }).noteId}` : sql``;
      const r = await sql<{ note_id: string; path: string; title: string; section_ordinal: number; heading_path: string; preview: string; stale: boolean; truncated: boolean | null; dist: number }>`
        WITH q AS (SELECT ${vec} AS v)
        SELECT * FROM (
          SELECT DISTINCT ON (c.note_id) c.note_id, n.path, n.title, c.section_ordinal, c.heading_path, c.preview,
                 (c.content_hash <> n.content_hash) AS stale, e.truncated, (c.embedding <=> q.v) AS dist
          FROM q, search_chunks c JOIN notes n ON n.id = c.note_id LEFT JOIN search_embedded_notes e ON e.note_id = c.note_id
          WHERE c.vault_id = ${vaultId} AND q.v IS NOT NULL ${exclude} ${f}
          ORDER BY c.note_id, dist
        ) best ORDER BY dist, note_id LIMIT ${k}`.execute(db);
      return r.rows.map((x) => ({
        noteId: Number(x.note_id),
        path: x.path,
        title: x.title,
        similarity: 1 - Number(x.dist),
        sectionOrdinal: x.section_ordinal,
        headingPath: x.heading_path,
        preview: x.stale ? null : x.preview,
        stale: x.stale,
        truncated: x.truncated ?? false,
      }));
    },
  };
}
