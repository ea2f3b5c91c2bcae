// The transfer family's settings (config section `transfer`): origins, link lifetimes, byte caps,
// concurrency, rate limits and the import rules, each with a default. Declarations only.

export interface TransferSettings {
  /** Public origin links are minted on (e.g. https://vault.example.org); null refuses minting. */
  readonly publicUrl: string | null;
  readonly defaultTtlSeconds: number;
  readonly minTtlSeconds: number;
  readonly maxTtlSeconds: number;
  /** A credential with less runway than this cannot mint. */
  readonly minRunwaySeconds: number;
  readonly maxUploadBytes: number;
  /** How long a claimed upload may stream before it is cut off and the link consumed. */
  readonly uploadStreamSeconds: number;
  readonly maxConcurrentUploads: number;
  readonly maxDownloadBytes: number;
  readonly pageRequestsPerMinute: number;
  readonly byteRequestsPerMinute: number;
  /** Link rows are deleted this many days after they expire. */
  readonly retainDays: number;
  readonly import: {
    readonly allowHttp: boolean;
    readonly maxBytes: number;
    readonly timeoutMs: number;
    readonly maxRedirects: number;
    readonly maxUrlLength: number;
  };
}

export type TransferCtxSettings = { transfer: TransferSettings };

const MiB = 1024 * 1024;

export const transferSettingsSchema = {
  type: 'object',
  properties: {
    publicUrl: { type: ['string', 'null'], pattern: '^https?://[^/?#]+/?$', default: null },
    defaultTtlSeconds: { type: 'integer', minimum: 1, default: 900 },
    minTtlSeconds: { type: 'integer', minimum: 1, default: 60 },
    maxTtlSeconds: { type: 'integer', minimum: 1, default: 3600 },
    minRunwaySeconds: { type: 'integer', minimum: 0, default: 30 },
    maxUploadBytes: { type: 'integer', minimum: 1, default: 25 * MiB },
    uploadStreamSeconds: { type: 'integer', minimum: 1, default: 600 },
    maxConcurrentUploads: { type: 'integer', minimum: 1, default: 4 },
    maxDownloadBytes: { type: 'integer', minimum: 1, default: 100 * MiB },
    pageRequestsPerMinute: { type: 'integer', minimum: 1, default: 30 },
    byteRequestsPerMinute: { type: 'integer', minimum: 1, default: 10 },
    retainDays: { type: 'integer', minimum: 0, default: 7 },
    import: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        allowHttp: { type: 'boolean', default: false },
        maxBytes: { type: 'integer', minimum: 1, default: 25 * MiB },
        timeoutMs: { type: 'integer', minimum: 100, default: 30_000 },
        maxRedirects: { type: 'integer', minimum: 0, maximum: 10, default: 5 },
        maxUrlLength: { type: 'integer', minimum: 16, default: 2048 },
      },
    },
  },
} as const;
