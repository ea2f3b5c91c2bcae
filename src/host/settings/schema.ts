// The host's settings schema (zod): every key, its type and its default. Family-owned sections are
// validated by the loader against each family's own JSON Schema; this file never names a family's keys.

import { z } from 'zod';

const port = z.number().int().min(0).max(65535);

export const familyToggleSchema = z
  .object({
    enabled: z.boolean().default(true),
    readOnly: z.boolean().default(false),
  })
  .strict();

export const hostSettingsSchema = z
  .object({
    vault: z
      .object({
        path: z.string().min(1).default('./vault'),
        name: z.string().min(1).max(80).default('vault'),
        obsidianName: z.string().min(1).max(200).nullable().default(null),
        allowNamedStaging: z.boolean().default(false),
        allowHardLinks: z
          .boolean()
          .default(false)
          .describe('Serve, index and write files whose link count is above 1. Off by default: a hard link can make a file outside the vault readable and writable through it.'),
        openWriterWaitMs: z
          .number()
          .int()
          .min(0)
          .max(10_000)
          .default(100)
          .describe('How long a replace waits for another program (an editor writing in place, an appender) to close a note it holds open for writing before refusing with concurrent_write.'),
      })
      .strict()
      .prefault({}),
    server: z
      .object({
        host: z.string().min(1).default('127.0.0.1'),
        port: port.default(3737),
        publicUrl: z.url().nullable().default(null),
        mode: z.enum(['stateful', 'stateless']).default('stateful'),
        bodyLimitBytes: z.number().int().min(1024).default(4 * 1024 * 1024),
        allowedHosts: z.array(z.string().min(1)).default([]),
        allowedOrigins: z.array(z.string().min(1)).default([]),
        maxSessions: z.number().int().min(1).default(1000),
        sessionIdleMinutes: z.number().int().min(1).default(60),
        maxSessionsPerCredential: z
          .number()
          .int()
          .min(1)
          .default(50)
          .describe("Open stateful sessions one credential may hold. At the cap (or at server.maxSessions) that credential's least recently used session with no request in flight is closed to make room; 503 when none is idle."),
        maxSubscriptionsPerSession: z.number().int().min(0).default(100).describe('Distinct resource URIs one session may subscribe to; more are refused as too_many_subscriptions.'),
        unauthenticatedBodyLimitBytes: z
          .number()
          .int()
          .min(0)
          .default(16 * 1024)
          .describe('Body bytes read from a request that carries no valid credential (MCP requests are refused from their headers, before any body byte is read).'),
        requestTimeoutMs: z
          .number()
          .int()
          .min(1000)
          .default(60_000)
          .describe('Time a client has to send a whole request (headers and body, uploads included); slower requests get 408 and the connection is closed.'),
        headersTimeoutMs: z.number().int().min(1000).default(10_000).describe('Time a client has to send the request headers.'),
        keepAliveTimeoutMs: z.number().int().min(0).default(5_000).describe('How long an idle keep-alive connection stays open between requests.'),
        maxConnections: z.number().int().min(1).default(1024).describe('Open TCP connections at most; further connections are closed at once.'),
      })
      .strict()
      .prefault({}),
    database: z
      .object({
        url: z.string().regex(/^(pglite:|postgres:\/\/|postgresql:\/\/)/, 'must start with pglite:, postgres:// or postgresql://').default('pglite:./data/db'),
        poolSize: z.number().int().min(1).max(100).default(10),
        pgliteThread: z.boolean().default(true),
      })
      .strict()
      .prefault({}),
    auth: z
      .object({
        mintAdminKeyOnFirstStart: z.boolean().default(true),
        keyCacheSeconds: z.number().min(0).max(300).default(2),
      })
      .strict()
      .prefault({}),
    admission: z
      .object({
        callsPerMinute: z.number().int().min(1).default(1200),
        writesPerMinute: z.number().int().min(1).default(120),
        concurrency: z
          .object({
            read: z.number().int().min(1).default(32),
            write: z.number().int().min(1).default(4),
            expensive: z.number().int().min(1).default(2),
          })
          .strict()
          .prefault({}),
        queueTimeoutMs: z.number().int().min(0).default(2000),
        dailyQuota: z.number().int().min(0).default(0),
        maxArgumentDepth: z
          .number()
          .int()
          .min(4)
          .max(1000)
          .default(64)
          .describe('Deepest nesting of objects and arrays accepted in tool arguments; deeper calls are refused as invalid_arguments before validation.'),
      })
      .strict()
      .prefault({}),
    tools: z
      .object({
        callTimeoutMs: z.number().int().min(100).default(30000),
      })
      .strict()
      .prefault({}),
    audit: z
      .object({
        enabled: z.boolean().default(true),
        paramsMaxChars: z.number().int().min(0).default(200),
        batchSize: z.number().int().min(1).default(200),
        flushIntervalMs: z.number().int().min(10).default(500),
        maxQueue: z.number().int().min(1).default(10000),
      })
      .strict()
      .prefault({}),
    workers: z
      .object({
        threads: z.number().int().min(0).max(64).default(0),
        idleTimeoutMs: z.number().int().min(0).default(60000),
      })
      .strict()
      .prefault({}),
    index: z
      .object({
        watch: z.boolean().default(true),
        debounceMs: z.number().int().min(0).max(10000).default(100),
        reconcileSeconds: z.number().min(0).default(300),
        maxNoteBytes: z.number().int().min(1).default(5 * 1024 * 1024),
        batchSize: z.number().int().min(1).max(1000).default(50),
        parseTaskSize: z.number().int().min(1).max(1000).default(25),
        prefetchBatches: z.number().int().min(1).max(8).default(2),
        readConcurrency: z.number().int().min(1).max(256).default(16),
        inlineParseMaxBytes: z.number().int().min(0).default(64 * 1024),
        groupCommitWaitMs: z.number().int().min(0).max(1000).default(10),
        deferredWrites: z.boolean().default(true),
        deferredDelayMs: z.number().int().min(0).max(10_000).default(200),
      })
      .strict()
      .prefault({}),
    log: z
      .object({
        level: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
      })
      .strict()
      .prefault({}),
    reload: z
      .object({
        watchConfig: z.boolean().default(true),
      })
      .strict()
      .prefault({}),
    families: z.record(z.string().regex(/^[a-z][a-z0-9-]{0,39}$/, 'a family name: lowercase letters, digits and -'), familyToggleSchema).default({}),
    plugins: z.array(z.string().min(1)).default([]),
  })
  .strict();

export type HostSettings = z.infer<typeof hostSettingsSchema>;

/** Top-level keys the host owns; any other top-level key must be claimed by a family's settings. */
export const HOST_KEYS: ReadonlySet<string> = new Set(Object.keys(hostSettingsSchema.shape));
