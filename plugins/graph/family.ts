// The graph family: the links index contributor plus read-only link tools (backlinks, links,
// neighbourhood, orphans, audit, related). Declares settings and tables; never writes the vault.
import { defineFamily } from '../../src/sdk/index.js';
import { graphContributor } from './contributor.js';
import { GRAPH_SETTINGS_SCHEMA, type GraphSettings } from './common.js';
import { graphMigrations } from './migrations.js';
import { auditNotes } from './tools/audit_notes.js';
import { findOrphans } from './tools/find_orphans.js';
import { findRelated } from './tools/find_related.js';
import { getBacklinks } from './tools/get_backlinks.js';
import { getLinks } from './tools/get_links.js';
import { getNeighborhood } from './tools/get_neighborhood.js';

// The contributor runs outside a tool call, so it reads the cap the host last validated for this family.
let settings: GraphSettings | undefined;
const DEFAULT_CAP = GRAPH_SETTINGS_SCHEMA.properties.maxLinksPerNote.default;

export default defineFamily({
  name: 'graph',
  description: 'Link graph: backlinks, outgoing links, neighbourhoods, orphans, hygiene audit and related notes.',
  requires: ['index?', 'embeddings?'],
  schemas: new URL('../../schemas/graph/', import.meta.url),
  settings: { graph: GRAPH_SETTINGS_SCHEMA },
  migrations: graphMigrations,
  provides: {
    // Not a service others use: a hook that captures this generation's validated settings for the contributor.
    'graph-settings': { create: (ctx) => (settings = ctx.settings.graph as GraphSettings) },
  },
  indexers: [graphContributor(() => settings?.maxLinksPerNote ?? DEFAULT_CAP)],
  tools: {
    get_backlinks: getBacklinks,
    get_links: getLinks,
    get_neighborhood: getNeighborhood,
    find_orphans: findOrphans,
    find_related: findRelated,
    audit_notes: auditNotes,
  },
});
