// A third-party Exocortex family, packaged on its own: bookmarks kept per vault in the server's database.
// It shows the parts of the contract most families need: tools typed from their schemas (generated/), a
// migration, a refusal code of its own, a service other families can use, settings, and health counts.
import { defineFamily, defineTool, familyRefusals, INDEX, optional, serviceRef, type ToolContext } from 'exocortex/sdk';
import type { BookmarksTools } from '../generated/index.js';

/** This family's own refusal codes: registered by the host when the family loads, never in the SDK. */
export const refusals = familyRefusals({
  bookmark_exists: {
    sentence: 'The address {url} is already kept as bookmark {id}; nothing was added.',
    retryable: false,
    details: ['url', 'id'],
  },
  bookmarks_full: {
    sentence:
      'This vault already keeps {limit} bookmarks (bookmarks.max); remove some or ask the operator to raise it.',
    retryable: false,
    details: ['limit'],
  },
});

type Settings = { bookmarks: { max: number } };
type Ctx = ToolContext<Settings>;

/** What the family offers other families: how many bookmarks a vault keeps. */
export interface BookmarkStore {
  count(vaultId: number): Promise<number>;
}

/**
 * The typed ref to that service: another family imports it (or declares the same `serviceRef<BookmarkStore>`),
 * lists it in `requires`, and gets a BookmarkStore from `ctx.service(BOOKMARK_STORE)` without a cast.
 */
export const BOOKMARK_STORE = serviceRef<BookmarkStore>('bookmark-store');

async function countIn(ctx: Pick<Ctx, 'db'>, vaultId: number): Promise<number> {
  const row = await ctx.db
    .selectFrom('example_bookmarks')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('vault_id', '=', vaultId)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export default defineFamily<BookmarksTools>({
  name: 'bookmarks',
  description: 'Bookmarks kept per vault (an example family)',
  schemas: new URL('../../schemas/', import.meta.url),
  settings: {
    bookmarks: {
      type: 'object',
      properties: {
        max: { type: 'integer', minimum: 1, default: 1000, description: 'Most bookmarks one vault keeps.' },
      },
    },
  },
  refusals,
  // Services by typed ref; optional(): the family works without it (health says whether it runs).
  requires: [optional(INDEX)],
  provides: {
    [BOOKMARK_STORE.id]: { create: (ctx): BookmarkStore => ({ count: (vaultId) => countIn(ctx, vaultId) }) },
  },
  migrations: {
    '0001-bookmarks': {
      async up(db) {
        await db.schema
          .createTable('example_bookmarks')
          .addColumn('id', 'serial', (c) => c.primaryKey())
          .addColumn('vault_id', 'integer', (c) => c.notNull())
          .addColumn('url', 'text', (c) => c.notNull())
          .addColumn('title', 'text', (c) => c.notNull())
          .addColumn('tags', 'jsonb', (c) => c.notNull())
          .addColumn('added', 'timestamptz', (c) => c.notNull())
          .addUniqueConstraint('example_bookmarks_vault_url', ['vault_id', 'url'])
          .execute();
      },
    },
  },
  tools: {
    add_bookmark: defineTool<BookmarksTools['add_bookmark']>({
      async handler(input, ctx: Ctx) {
        const vaultId = ctx.principal.vaultId;
        const held = await ctx.db
          .selectFrom('example_bookmarks')
          .select('id')
          .where('vault_id', '=', vaultId)
          .where('url', '=', input.url)
          .executeTakeFirst();
        if (held) refusals.refuse('bookmark_exists', { url: input.url, id: held.id });
        const count = await countIn(ctx, vaultId);
        if (count >= ctx.settings.bookmarks.max)
          refusals.refuse('bookmarks_full', { limit: ctx.settings.bookmarks.max });
        const row = await ctx.db
          .insertInto('example_bookmarks')
          .values({
            vault_id: vaultId,
            url: input.url,
            title: input.title,
            tags: JSON.stringify(input.tags ?? []),
            added: ctx.now(),
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        return { id: Number(row.id), url: input.url, count: count + 1 };
      },
      render: (out) => `Kept ${out.url} as bookmark ${out.id} (${out.count} in this vault).`,
    }),
    list_bookmarks: defineTool<BookmarksTools['list_bookmarks']>({
      async handler(input, ctx: Ctx) {
        let q = ctx.db
          .selectFrom('example_bookmarks')
          .select(['id', 'url', 'title', 'tags', 'added'])
          .where('vault_id', '=', ctx.principal.vaultId);
        if (input.tag) q = q.where('tags', '@>', JSON.stringify([input.tag]));
        const rows = await q
          .orderBy('id', 'desc')
          .limit(input.limit ?? 50)
          .execute();
        return {
          bookmarks: rows.map((r) => ({
            id: Number(r.id),
            url: r.url,
            title: r.title,
            tags: typeof r.tags === 'string' ? JSON.parse(r.tags) : r.tags,
            added: new Date(r.added).toISOString(),
          })),
        };
      },
      render: (out) =>
        out.bookmarks
          .map((b) => `${b.id}. ${b.title} <${b.url}>${b.tags.length ? ` #${b.tags.join(' #')}` : ''}`)
          .join('\n') || 'No bookmarks.',
    }),
  },
  async health(ctx) {
    return { bookmarks: await ctx.service(BOOKMARK_STORE).count(ctx.vaultId), index: ctx.hasService(INDEX) };
  },
});
