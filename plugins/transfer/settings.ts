// The transfer family's settings (config section `transfer`): origins, link lifetimes, byte caps,
// concurrency, rate limits and the import rules, each with a default. Declarations only.
import type { TransferSettings } from '../../src/generated/transfer/settings.js';

// The section's shape is generated from its schema below (npm run gen): the two cannot drift.
export type { TransferSettings };

export type TransferCtxSettings = { transfer: TransferSettings };

const MiB = 1024 * 1024;

export const transferSettingsSchema = {
  type: 'object',
  properties: {
    publicUrl: {
      type: ['string', 'null'],
      pattern: '^https?://[^/?#]+/?$',
      default: null,
      description: 'Public origin links are minted on (e.g. https://vault.example.org); null refuses minting.',
    },
    defaultTtlSeconds: {
      type: 'integer',
      minimum: 1,
      default: 900,
      description: 'Link lifetime when expires_in is not given.',
    },
    minTtlSeconds: {
      type: 'integer',
      minimum: 1,
      default: 60,
      description: 'Shortest link lifetime; a shorter expires_in is raised to it.',
    },
    maxTtlSeconds: {
      type: 'integer',
      minimum: 1,
      default: 3600,
      description: 'Longest link lifetime; a longer expires_in is lowered to it.',
    },
    minRunwaySeconds: {
      type: 'integer',
      minimum: 0,
      default: 30,
      description: 'A credential with less lifetime left than this cannot mint links.',
    },
    maxUploadBytes: {
      type: 'integer',
      minimum: 1,
      default: 25 * MiB,
      description: 'Largest upload, enforced while streaming.',
    },
    uploadStreamSeconds: {
      type: 'integer',
      minimum: 1,
      default: 600,
      description: 'How long a claimed upload may stream before it is cut off and the link consumed.',
    },
    maxConcurrentUploads: {
      type: 'integer',
      minimum: 1,
      default: 4,
      description: 'Uploads streaming at once; further ones get 503.',
    },
    maxDownloadBytes: {
      type: 'integer',
      minimum: 1,
      default: 100 * MiB,
      description: 'Largest file a download link (or an overwrite pin) covers.',
    },
    pageRequestsPerMinute: {
      type: 'integer',
      minimum: 1,
      default: 30,
      description: 'Per client address: link pages and info requests per minute.',
    },
    byteRequestsPerMinute: {
      type: 'integer',
      minimum: 1,
      default: 10,
      description: 'Per client address: uploads and downloads per minute.',
    },
    retainDays: {
      type: 'integer',
      minimum: 0,
      default: 7,
      description: 'Link rows are deleted this many days after they expire (swept when a link is minted).',
    },
    import: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: "import_from_url's rules.",
      properties: {
        allowHttp: {
          type: 'boolean',
          default: false,
          description: 'Allow plain http:// imports (https only otherwise).',
        },
        maxBytes: { type: 'integer', minimum: 1, default: 25 * MiB, description: 'Largest import, in bytes.' },
        timeoutMs: {
          type: 'integer',
          minimum: 100,
          default: 30_000,
          description: 'One deadline for the whole import, redirects included.',
        },
        maxRedirects: { type: 'integer', minimum: 0, maximum: 10, default: 5, description: 'Redirect hops followed.' },
        maxUrlLength: { type: 'integer', minimum: 16, default: 2048, description: 'Longest URL accepted.' },
      },
    },
  },
} as const;
