// The change-feed family: an index contributor recording note events, get_changes over them, and a
// vault://changes resource with the latest events. Never writes the vault.
import {
  defineFamily,
  INDEX,
  optional,
  pruneVaultTables,
  RESOURCE_EVENTS,
  type ContributorFactoryContext,
  type IndexContributor,
} from '../../src/sdk/index.js';
import type { ChangeFeedTools } from '../../src/generated/change-feed/index.js';
import { feedContributor, type FeedSettings } from './contributor.js';
import { feedMigrations } from './migrations.js';
import getChanges from './tools/get_changes.js';
import { readChanges, renderChanges } from './tools/get_changes.js';

const DEFAULTS: FeedSettings = {
  retentionDays: 90,
  maxEvents: 100_000,
  pruneEvery: 500,
  pageCap: 500,
  maxEventsPerPass: 1000,
};
export const CHANGES_URI = 'vault://changes';

/** The generation's contributor: its settings, the index's readiness, and a nudge to resource subscribers. */
function contributors(ctx: ContributorFactoryContext): IndexContributor<any>[] {
  const settings: FeedSettings = { ...DEFAULTS, ...(ctx.settings.changeFeed as Partial<FeedSettings>) };
  // Whether the index is still on its initial scan decides if first sightings are a rebuild (reset) or creations.
  const readiness = (vaultId: number) => (ctx.hasService(INDEX) ? ctx.service(INDEX).status(vaultId) : undefined);
  const inner = feedContributor(() => settings, readiness);
  // Vaults with events recorded in a transaction not yet committed. Subscribers hear of them once it
  // commits (committed()), when a get_changes from any connection sees them; a transaction rolled back
  // leaves its vault marked, and the next commit sends one notification too many, never one too few.
  const recorded = new Set<number>();
  const nudge = (vaultId: number) => {
    recorded.add(vaultId);
  };
  return [
    {
      ...inner,
      async write(trx, note, model) {
        await inner.write(trx, note, model);
        nudge(note.vaultId);
      },
      async writeMany(trx, items) {
        await inner.writeMany!(trx, items);
        for (const v of new Set(items.map((i) => i.note.vaultId))) nudge(v);
      },
      async remove(trx, note) {
        await inner.remove(trx, note);
        nudge(note.vaultId);
      },
      async removeMany(trx, notes) {
        await inner.removeMany!(trx, notes);
        for (const v of new Set(notes.map((n) => n.vaultId))) nudge(v);
      },
      ...(inner.rename
        ? {
            async rename(trx, note, from, model) {
              await inner.rename!(trx, note, from, model);
              nudge(note.vaultId);
            },
          }
        : {}),
      committed(vaultId) {
        if (!recorded.delete(vaultId) || !ctx.hasService(RESOURCE_EVENTS)) return;
        ctx.service(RESOURCE_EVENTS).updated(CHANGES_URI, vaultId);
      },
    },
  ];
}

export default defineFamily<ChangeFeedTools>({
  name: 'change-feed',
  description: 'What changed in the vault since a cursor: created, modified, moved and deleted notes, attributed.',
  requires: [optional(INDEX)],
  schemas: new URL('../../schemas/change-feed/', import.meta.url),
  pruneVaults: pruneVaultTables('change_events', 'change_feed_state', 'change_feed_meta'),
  settings: {
    changeFeed: {
      type: 'object',
      properties: {
        retentionDays: {
          type: 'integer',
          minimum: 1,
          default: DEFAULTS.retentionDays,
          description: 'Events older than this are pruned.',
        },
        maxEvents: {
          type: 'integer',
          minimum: 100,
          default: DEFAULTS.maxEvents,
          description: 'At most this many events are kept per vault.',
        },
        pruneEvery: {
          type: 'integer',
          minimum: 1,
          default: DEFAULTS.pruneEvery,
          description: 'Prune after this many new events.',
        },
        pageCap: {
          type: 'integer',
          minimum: 1,
          default: DEFAULTS.pageCap,
          description: 'Most events one get_changes page returns.',
        },
        maxEventsPerPass: {
          type: 'integer',
          minimum: 1,
          default: DEFAULTS.maxEventsPerPass,
          description:
            'Outside changes itemised per index pass; beyond, one gap event counts the rest (changes made through tools are always itemised).',
        },
      },
    },
  },
  migrations: feedMigrations,
  indexers: contributors,
  tools: { get_changes: getChanges },
  resources: [
    {
      uri: CHANGES_URI,
      name: 'changes',
      title: 'Recent vault changes',
      description:
        'The latest note changes (created, modified, moved, deleted) with the next_since cursor to continue from with get_changes.',
      mimeType: 'text/plain',
      async read(uri, _params, ctx) {
        const last = (
          await ctx.db
            .selectFrom('change_events')
            .select((eb) => eb.fn.max('seq').as('m'))
            .where('vault_id', '=', ctx.vault.id)
            .executeTakeFirst()
        )?.m;
        const since = Math.max(0, Number(last ?? 0) - 50);
        return [
          { uri, mimeType: 'text/plain', text: renderChanges(await readChanges(ctx, { since: `ev:${since}` }, 50)) },
        ];
      },
    },
  ],
});
