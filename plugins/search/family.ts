// The search family: keyword, semantic and hybrid search over the vault. Declares its settings,
// tables, index contributor, tools and the `embeddings` service; holds no logic of its own.
import { defineFamily, EMBEDDINGS, INDEX, optional, type ServiceFactoryContext } from '../../src/sdk/index.js';
import type { SearchTools } from '../../src/generated/search/index.js';
import { createEmbeddingsService, type EmbeddingWorker } from './embeddings/service.js';
import { keywordIndexer } from './keyword/indexer.js';
import { KeywordMemory } from './keyword/memory-index.js';
import { checkKeywordConfigs } from './keyword/meta.js';
import migration0001 from './migrations/0001-search.js';
import migration0002 from './migrations/0002-gin-fastupdate.js';
import migration0003 from './migrations/0003-chunk-vectors-inline.js';
import migration0004 from './migrations/0004-chunk-bits.js';
import migration0005 from './migrations/0005-term-stats.js';
import migration0006 from './migrations/0006-df-sample.js';
import migration0007 from './migrations/0007-keyword-rev.js';
import migration0008 from './migrations/0008-body-gin-pending.js';
import migration0009 from './migrations/0009-cjk-vector.js';
import migration0010 from './migrations/0010-vectors-uncompressed.js';
import { effectiveEmbedding, searchSettingsSchema, type SearchSettings } from './settings.js';
import connectorFetch from './tools/fetch.js';
import connectorSearch from './tools/search.js';
import getTags from './tools/get_tags.js';
import hybridSearch from './tools/hybrid_search.js';
import keywordSearch from './tools/keyword_search.js';
import searchRegex from './tools/search_regex.js';
import semanticSearch from './tools/semantic_search.js';

import { rebuildKeyword } from './keyword/meta.js';
import { reembedAll, resetEmbeddings } from './embeddings/service.js';

export { rebuildKeyword, reembedAll, resetEmbeddings };

export interface KeywordIndexService {
  readonly configs: string[];
  /** This process's in-memory scoring indexes, one per vault (keyword/memory-index.ts); absent when switched off. */
  readonly memory?: KeywordMemory;
}

/** Boot-time keyword check: a bad config name or a changed list fails the family with the reason. */
async function createKeywordIndex(ctx: ServiceFactoryContext): Promise<KeywordIndexService> {
  const s = (ctx.settings as { search: SearchSettings }).search;
  await checkKeywordConfigs(ctx.db, { configs: s.ftsConfigs, headChars: s.headChars, bodyChars: s.bodyChars });
  return { configs: [...s.ftsConfigs], ...(s.keywordMemory ? { memory: new KeywordMemory(ctx.db, ctx.log) } : {}) };
}

export default defineFamily<SearchTools>({
  name: 'search',
  description: 'Keyword, semantic and hybrid search over the vault',
  requires: [optional(INDEX)],
  provides: {
    'search-keyword': { create: createKeywordIndex, dispose: (svc) => (svc as KeywordIndexService).memory?.close() },
    [EMBEDDINGS.id]: {
      create: createEmbeddingsService,
      dispose: (worker) => (worker as EmbeddingWorker).stop(),
    },
  },
  schemas: new URL('../../schemas/search/', import.meta.url),
  settings: { search: searchSettingsSchema },
  migrations: {
    '0001-search': migration0001,
    '0002-gin-fastupdate': migration0002,
    '0003-chunk-vectors-inline': migration0003,
    '0004-chunk-bits': migration0004,
    '0005-term-stats': migration0005,
    '0006-df-sample': migration0006,
    '0007-keyword-rev': migration0007,
    '0008-body-gin-pending': migration0008,
    '0009-cjk-vector': migration0009,
    '0010-vectors-uncompressed': migration0010,
  },
  // The keyword contributor, and once a pass has caught up with the vault, the vault's memory index loaded behind it.
  indexers: (ctx) => {
    const search = (ctx.settings as { search: SearchSettings }).search;
    return [
      {
        ...keywordIndexer(search, { embeds: effectiveEmbedding(search.embedding).provider !== 'none' }),
        async passEnd(_db, pass) {
          if (pass.caughtUp && ctx.hasService('search-keyword'))
            void ctx.service<KeywordIndexService>('search-keyword').memory?.ensure(pass.vaultId);
        },
      },
    ];
  },
  tools: {
    keyword_search: keywordSearch,
    semantic_search: semanticSearch,
    hybrid_search: hybridSearch,
    search_regex: searchRegex,
    get_tags: getTags,
    search: connectorSearch,
    fetch: connectorFetch,
  },
  // Embedding progress of one vault for /health and /metrics: counts and the vector strategy only (the last
  // provider error stays in the log). Without semantic search there is no backlog field, so no backlog sample.
  healthBacklog: {
    name: 'embedding',
    fields: ['queued', 'stale'],
    when: 'semantic',
    help: 'Notes waiting to be embedded (queued or stale), per vault; no sample while semantic search is off.',
  },
  async health(ctx): Promise<Record<string, number | boolean | string>> {
    if (!ctx.hasService(EMBEDDINGS)) return { semantic: false };
    const svc = ctx.service(EMBEDDINGS) as EmbeddingWorker;
    const state = svc.availability();
    const c = await svc.counts(ctx.vaultId);
    return {
      semantic: state.ok,
      vectorSearch: svc.vectors.strategy,
      embedded: c.embedded,
      queued: c.queued,
      stale: c.stale,
      failing: c.failing,
    };
  },
  commands: {
    'rebuild-keyword': {
      description:
        'recompute every keyword vector for the configured search.ftsConfigs (required after changing that list)',
      vaultScoped: true,
      async run(ctx) {
        const s = (ctx.settings as { search: SearchSettings }).search;
        const n = await rebuildKeyword(ctx.db, {
          configs: s.ftsConfigs,
          headChars: s.headChars,
          bodyChars: s.bodyChars,
          vaultId: ctx.onlyVault?.id,
        });
        ctx.print(
          `rebuilt keyword vectors of ${n} notes${ctx.onlyVault ? ` of vault ${ctx.onlyVault.name}` : ''} for ${s.ftsConfigs.join(', ')}`,
        );
      },
    },
    'reset-embeddings': {
      description:
        'drop all vectors and their model fingerprint, and queue every note (required after changing the embedding model)',
      async run(ctx) {
        ctx.print(`queued ${await resetEmbeddings(ctx.db)} notes for embedding`);
      },
    },
    reembed: {
      description: 'queue every note for embedding, keeping current vectors until new ones land',
      vaultScoped: true,
      async run(ctx) {
        const n = await reembedAll(ctx.db, ctx.onlyVault?.id);
        ctx.print(`queued ${n} notes${ctx.onlyVault ? ` of vault ${ctx.onlyVault.name}` : ''} for embedding`);
      },
    },
  },
});
