// The graph family's `links` service: its stored links in bulk, for families that evaluate link predicates
// over many notes (bases). Read-only; one bounded query, never reads vault bytes.
import { sql } from 'kysely';
import type { LinksService, ServiceFactoryContext, StoredLink } from '../../src/sdk/index.js';

export function createLinksService(ctx: ServiceFactoryContext): LinksService {
  return {
    async all(vaultId, max) {
      const { rows } = await sql<{
        source: string;
        target: string;
        alias: string | null;
        embed: boolean;
        resolved: string | null;
        attachment: boolean;
        ambiguous: boolean;
      }>`
        SELECT s.path AS source, l.target, l.alias, l.embed, t.path AS resolved, l.attachment, l.ambiguous
        FROM graph_links l JOIN notes s ON s.id = l.source_id LEFT JOIN notes t ON t.id = l.target_id
        WHERE l.vault_id = ${vaultId}
        ORDER BY s.path, l.ord LIMIT ${max + 1}`.execute(ctx.db);
      const links: StoredLink[] = rows.slice(0, max);
      return { links, complete: rows.length <= max };
    },
  };
}
