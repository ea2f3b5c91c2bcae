// The graph family: the links index contributor plus read-only link tools (backlinks, links,
// neighbourhood, orphans, audit, related). Declares settings and tables; never writes the vault.
import { defineFamily, EMBEDDINGS, INDEX, LINKS, optional, pruneVaultTables } from '../../src/sdk/index.js';
import type { GraphTools } from '../../src/generated/graph/index.js';
import { graphContributor } from './contributor.js';
import { GRAPH_SETTINGS_SCHEMA, type GraphSettings } from './common.js';
import { createLinksService } from './links-service.js';
import { graphMigrations } from './migrations.js';
import auditNotes from './tools/audit_notes.js';
import findOrphans from './tools/find_orphans.js';
import findRelated from './tools/find_related.js';
import getBacklinks from './tools/get_backlinks.js';
import getLinks from './tools/get_links.js';
import getNeighborhood from './tools/get_neighborhood.js';

export default defineFamily<GraphTools>({
  name: 'graph',
  description: 'Link graph: backlinks, outgoing links, neighbourhoods, orphans, hygiene audit and related notes.',
  requires: [optional(INDEX), optional(EMBEDDINGS)],
  // The sweep's queue is the one table keyed by vault without a note behind it.
  pruneVaults: pruneVaultTables('graph_pending'),
  // The stored links in bulk, for the bases family's link predicates (file.links, file.backlinks, hasLink).
  provides: { [LINKS.id]: { create: createLinksService } },
  schemas: new URL('../../schemas/graph/', import.meta.url),
  settings: { graph: GRAPH_SETTINGS_SCHEMA },
  migrations: graphMigrations,
  // Built per generation, so the contributor sees this generation's validated link cap.
  indexers: ({ settings }) => [graphContributor(() => (settings.graph as GraphSettings).maxLinksPerNote)],
  tools: {
    get_backlinks: getBacklinks,
    get_links: getLinks,
    get_neighborhood: getNeighborhood,
    find_orphans: findOrphans,
    find_related: findRelated,
    audit_notes: auditNotes,
  },
});
