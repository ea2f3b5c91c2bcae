// The graph family's `links` service: its stored links in bulk, for families that evaluate link predicates
// over many notes (bases): all of a vault's, or those of some notes. Read-only; bounded queries over the links table
// alone, never reads vault bytes.
import { sql } from 'kysely';
import type { LinksService, ServiceFactoryContext, StoredLink } from '../../src/sdk/index.js';

type LinkRow = {
  source_id: string | number;
  target_id: string | number | null;
  target: string;
  alias: string | null;
  embed: boolean;
  attachment: boolean;
  ambiguous: boolean;
};

const toLink = (r: LinkRow): StoredLink => ({
  sourceId: Number(r.source_id),
  targetId: r.target_id === null ? null : Number(r.target_id),
  target: r.target,
  alias: r.alias,
  embed: r.embed,
  attachment: r.attachment,
  ambiguous: r.ambiguous,
});

/** Source notes read per statement by `of`. */
const OF_BATCH = 1000;

export function createLinksService(ctx: ServiceFactoryContext): LinksService {
  return {
    async all(vaultId, max) {
      const { rows } = await sql<LinkRow>`
        SELECT source_id, target_id, target, alias, embed, attachment, ambiguous FROM graph_links
        WHERE vault_id = ${vaultId} ORDER BY source_id, ord LIMIT ${max + 1}`.execute(ctx.db);
      return { links: rows.slice(0, max).map(toLink), complete: rows.length <= max };
    },
    async of(vaultId, sourceIds) {
      const out: StoredLink[] = [];
      for (let i = 0; i < sourceIds.length; i += OF_BATCH) {
        const { rows } = await sql<LinkRow>`
          SELECT source_id, target_id, target, alias, embed, attachment, ambiguous FROM graph_links
          WHERE vault_id = ${vaultId} AND source_id = ANY(${`{${sourceIds.slice(i, i + OF_BATCH).join(',')}}`}::bigint[])
          ORDER BY source_id, ord`.execute(ctx.db);
        for (const r of rows) out.push(toLink(r));
      }
      return out;
    },
  };
}
