// Shared search filters (folder, tags, frontmatter) as SQL over the host's `notes` row aliased `n`.
// Builds parameterised fragments only; never interpolates user text into SQL.
import { sql, type RawBuilder } from 'kysely';
import { type NoteFilters, escapeLike, folderScope, tagKey, underFolder } from '../../src/sdk/index.js';

/** The search tools' filters: the SDK's NoteFilters, which the embeddings contract also takes. */
export type SearchFilters = NoteFilters;

/** The folder filter as the SDK reads it ('' = the whole vault); refuses traversal as invalid_path. */
export function normaliseFolder(folder: string | undefined): string {
  return folderScope(folder).folder;
}

/** Whether filterSql would add any condition (so callers can skip joining the notes row). */
export function hasFilters(filters: SearchFilters): boolean {
  return (
    !!normaliseFolder(filters.folder) ||
    (filters.tags ?? []).some((t) => tagKey(t)) ||
    !!(filters.frontmatter && Object.keys(filters.frontmatter).length)
  );
}

/** `AND …` conditions for the filters, or an empty fragment. Tags match nested children too. */
export function filterSql(filters: SearchFilters): RawBuilder<unknown> {
  const parts: RawBuilder<unknown>[] = [];
  const scope = folderScope(filters.folder);
  if (scope.folder) parts.push(underFolder(sql`n.path`, scope));
  for (const raw of filters.tags ?? []) {
    const tag = tagKey(raw);
    if (!tag) continue;
    parts.push(sql`EXISTS (SELECT 1 FROM jsonb_array_elements(n.tags) t
      WHERE lower(coalesce(t->>'tag', t #>> '{}')) = ${tag} OR lower(coalesce(t->>'tag', t #>> '{}')) LIKE ${`${escapeLike(tag)}/%`})`);
  }
  if (filters.frontmatter && Object.keys(filters.frontmatter).length)
    parts.push(sql`n.frontmatter @> ${JSON.stringify(filters.frontmatter)}::jsonb`);
  return parts.length ? sql` AND ${sql.join(parts, sql` AND `)}` : sql``;
}

export function describeFilters(filters: SearchFilters): string {
  const out: string[] = [];
  const folder = normaliseFolder(filters.folder);
  if (folder) out.push(`folder=${folder}/`);
  if (filters.tags?.length) out.push(`tags=${filters.tags.join(',')}`);
  if (filters.frontmatter && Object.keys(filters.frontmatter).length)
    out.push(`frontmatter=${JSON.stringify(filters.frontmatter)}`);
  return out.join(' ');
}
