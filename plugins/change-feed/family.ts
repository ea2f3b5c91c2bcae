// The change-feed family: an index contributor recording note events, get_changes over them, and a
// vault://changes resource with the latest events. Never writes the vault.
import { defineFamily } from '../../src/sdk/index.js';
import type { IndexService } from '../../src/sdk/index-service.js';
import { feedContributor, type FeedSettings, type IndexReadiness } from './contributor.js';
import { feedMigrations } from './migrations.js';
import { getChanges, readChanges, renderChanges } from './tools/get_changes.js';

const DEFAULTS: FeedSettings = { retentionDays: 90, maxEvents: 100_000, pruneEvery: 500, pageCap: 500 };
// The contributor runs outside tool calls: it reads the settings this family's generation last validated.
let current: FeedSettings = DEFAULTS;
let readiness: IndexReadiness = () => undefined;

export default defineFamily({
  name: 'change-feed',
  description: 'What changed in the vault since a cursor: created, modified, moved and deleted notes, attributed.',
  requires: ['index?'],
  schemas: new URL('../../schemas/change-feed/', import.meta.url),
  settings: {
    changeFeed: {
      type: 'object',
      properties: {
        retentionDays: { type: 'integer', minimum: 1, default: DEFAULTS.retentionDays, description: 'Events older than this are pruned.' },
        maxEvents: { type: 'integer', minimum: 100, default: DEFAULTS.maxEvents, description: 'At most this many events are kept per vault.' },
        pruneEvery: { type: 'integer', minimum: 1, default: DEFAULTS.pruneEvery, description: 'Prune after this many new events.' },
        pageCap: { type: 'integer', minimum: 1, default: DEFAULTS.pageCap, description: 'Most events one get_changes page returns.' },
      },
    },
  },
  provides: {
    'change-feed-settings': {
      create: (ctx) => {
        // Whether the index is still on its initial scan decides if first sightings are a rebuild (reset) or creations.
        readiness = (vaultId) => (ctx.hasService('index') ? ctx.service<IndexService>('index').status(vaultId) : undefined);
        return (current = { ...DEFAULTS, ...(ctx.settings.changeFeed as Partial<FeedSettings>) });
      },
    },
  },
  migrations: feedMigrations,
  indexers: [feedContributor(() => current, (vaultId) => readiness(vaultId))],
  tools: { get_changes: getChanges },
  resources: [
    {
      uri: 'vault://changes',
      name: 'changes',
      title: 'Recent vault changes',
      description: 'The latest note changes (created, modified, moved, deleted) with the next_since cursor to continue from with get_changes.',
      mimeType: 'text/plain',
      async read(uri, _params, ctx) {
        const last = (await ctx.db.selectFrom('change_events').select((eb) => eb.fn.max('seq').as('m')).where('vault_id', '=', ctx.vault.id).executeTakeFirst())?.m;
        const since = Math.max(0, Number(last ?? 0) - 50);
        return [{ uri, mimeType: 'text/plain', text: renderChanges(await readChanges(ctx, { since: `ev:${since}` }, 50)) }];
      },
    },
  ],
});
