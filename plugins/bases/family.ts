// The bases family: Obsidian Bases (.base files and ```base blocks) queried from the index without Obsidian —
// list_bases and query_base. Read-only: declares settings and refusal codes, keeps no tables (a record set in memory,
// kept current by an index observer), never writes.
import { defineFamily, INDEX, LINKS, optional } from '../../src/sdk/index.js';
import type { BasesTools } from '../../src/generated/bases/index.js';
import { BASES_RECORDS, BasesRecordCache, basesRecordsContributor } from './record-cache.js';
import { basesRefusals } from './refusals.js';
import { type BasesSettings, basesSettingsSchema } from './settings.js';
import listBases from './tools/list_bases.js';
import queryBase from './tools/query_base.js';

export default defineFamily<BasesTools>({
  name: 'bases',
  description:
    'Obsidian Bases without Obsidian: list .base files and base blocks, and answer their views from the index.',
  // Links come from the graph family's link index; without it, bases that read links are refused by name.
  requires: [optional(INDEX), optional(LINKS)],
  schemas: new URL('../../schemas/bases/', import.meta.url),
  settings: { bases: basesSettingsSchema },
  // The record set queries read (notes' fields and links in memory), kept current by an observer of the index.
  provides: {
    [BASES_RECORDS.id]: {
      create: (ctx) => new BasesRecordCache(ctx.db, (ctx.settings as { bases: BasesSettings }).bases.cacheNotes),
      dispose: (cache) => (cache as BasesRecordCache).clear(),
    },
  },
  indexers: (ctx) => [basesRecordsContributor(ctx)],
  refusals: basesRefusals,
  tools: { list_bases: listBases, query_base: queryBase },
});
