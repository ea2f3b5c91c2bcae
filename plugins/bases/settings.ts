// The bases family's settings: page caps and the bounds on what one query may cost. Declarations and defaults only.
import type { ToolContext } from '../../src/sdk/index.js';
import type { EngineLimits } from './engine.js';
import type { BasesSettings } from '../../src/generated/bases/settings.js';

// The section's shape is generated from its schema below (npm run gen): the two cannot drift.
export type { BasesSettings };

export type BasesCtx = ToolContext<{ bases: BasesSettings }>;

export function engineLimits(s: BasesSettings): EngineLimits {
  return {
    maxChars: s.maxExpressionChars,
    maxDepth: s.maxExpressionDepth,
    maxNodes: s.maxExpressionNodes,
    maxFormulas: s.maxFormulas,
    maxWorkSteps: s.maxWorkSteps,
    maxStringChars: s.maxStringChars,
  };
}

export const basesSettingsSchema = {
  type: 'object',
  properties: {
    rowsCap: { type: 'integer', minimum: 1, default: 500, description: 'Most rows one query_base page returns.' },
    listCap: { type: 'integer', minimum: 1, default: 500, description: 'Most bases one list_bases page returns.' },
    listScanNotes: {
      type: 'integer',
      minimum: 0,
      default: 20000,
      description: 'Most notes list_bases reads looking for ```base blocks (the rest are counted as not scanned).',
    },
    maxBaseBytes: { type: 'integer', minimum: 256, default: 262144, description: 'Largest base (YAML) read.' },
    maxExpressionChars: {
      type: 'integer',
      minimum: 16,
      default: 4000,
      description: 'Longest filter, formula or summary expression.',
    },
    maxExpressionDepth: {
      type: 'integer',
      minimum: 4,
      maximum: 256,
      default: 64,
      description: 'Deepest nesting of one expression (parentheses, calls, operators).',
    },
    maxExpressionNodes: {
      type: 'integer',
      minimum: 16,
      default: 2000,
      description: 'Most parts (literals, names, operators, calls) of one expression.',
    },
    maxFormulas: { type: 'integer', minimum: 1, default: 200, description: 'Most formulas one base declares.' },
    maxWorkSteps: {
      type: 'integer',
      minimum: 1000,
      default: 20000000,
      description:
        'Evaluation steps one query may take (rows × expression size, list elements, sort); past it the query is refused as bases_too_costly.',
    },
    maxStringChars: {
      type: 'integer',
      minimum: 1024,
      default: 1000000,
      description: 'Longest string an expression may build (repeat, join, concatenation).',
    },
    maxLinks: {
      type: 'integer',
      minimum: 1000,
      default: 2000000,
      description: 'Most stored links a query reads for file.links, file.backlinks and hasLink.',
    },
    cacheNotes: {
      type: 'integer',
      minimum: 0,
      default: 200000,
      description:
        'Most notes whose fields (and links) are held in memory between queries, over all vaults; least recently queried vaults go first, and a larger vault is read from the index per query. 0 holds none.',
    },
    filesCacheSeconds: {
      type: 'integer',
      minimum: 0,
      maximum: 3600,
      default: 10,
      description:
        "How long one walk of a vault's other files (attachments, .base, .canvas, which the index does not hold) is reused by queries that read them. 0 walks per query.",
    },
  },
} as const;
