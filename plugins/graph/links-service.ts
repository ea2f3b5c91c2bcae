// The graph family's `links` service: its stored links in bulk, for families that evaluate link predicates
// over many notes (bases). Read-only; one bounded query over the links table alone, never reads vault bytes.
import { sql } from 'kysely';
import type { LinksService, ServiceFactoryContext, StoredLink } from '../../src/sdk/index.js';

export function createLinksService(ctx: ServiceFactoryContext): LinksService {
  return {
    async all(vaultId, max) {
      const { rows } = await sql<{
        source_id: string | number;
        target_id: string | number | null;
        target: string;
        alias: string | null;
        embed: boolean;
        attachment: boolean;
        ambiguous: boolean;
      }>`
        SELECT source_id, target_id, target, alias, embed, attachment, ambiguous FROM graph_links
        WHERE vault_id = ${vaultId} ORDER BY source_id, ord LIMIT ${max + 1}`.execute(ctx.db);
      const links: StoredLink[] = rows.slice(0, max).map((r) => ({
        sourceId: Number(r.source_id),
        targetId: r.target_id === null ? null : Number(r.target_id),
        target: r.target,
        alias: r.alias,
        embed: r.embed,
        attachment: r.attachment,
        ambiguous: r.ambiguous,
      }));
      return { links, complete: rows.length <= max };
    },
  };
}
