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
        interactiveThreads: z.number().int().min(1).max(64).default(1).describe('Threads of the interactive worker lane (tasks a tool call waits on); the bulk lane (indexing) has `threads`.'),
        idleTimeoutMs: z.number().int().min(0).default(60000),
        taskTimeoutMs: z.number().int().min(0).default(15000).describe('Longest one worker task may run; past it the task is aborted, its thread replaced, and the caller refused as timeout (a note whose parse runs past it is quarantined). 0 = no budget.'),
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
        inlineParseMaxBytes: z.number().int().min(0).default(16 * 1024).describe('Write-through notes up to this many bytes are parsed on the event loop, larger ones in the worker pool. Parsing is linear, at most a few ms per KiB on adversarial text (docs/performance.md), so this bounds the event-loop time of one parse.'),
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
