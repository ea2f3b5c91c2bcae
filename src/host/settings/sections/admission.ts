// Host settings, section `admission`: Admission: rate buckets, concurrency slots, quotas and per-user defaults.
import { z } from 'zod';
import { limit, LIMIT_TEXT } from './common.js';
import { section } from './section.js';

export const admissionSection = section(
  'restart',
  z
    .object({
      callsPerMinute: z
        .number()
        .int()
        .min(1)
        .default(1200)
        .describe('Rate bucket per credential over all tool calls; beyond it calls are refused as rate_limited.'),
      writesPerMinute: z
        .number()
        .int()
        .min(1)
        .default(120)
        .describe('Rate bucket per credential over write-class tool calls.'),
      concurrency: z
        .object({
          read: z.number().int().min(1).default(32).describe('Concurrent calls of read-class tools.'),
          write: z.number().int().min(1).default(4).describe('Concurrent calls of write-class tools.'),
          expensive: z
            .number()
            .int()
            .min(1)
            .default(2)
            .describe(
              'Concurrent calls of expensive-class tools (regex scans, semantic and hybrid search, audits, imports).',
            ),
        })
        .strict()
        .prefault({})
        .describe('Concurrency slots per admission class; a call waits up to admission.queueTimeoutMs for one.'),
      queueTimeoutMs: z
        .number()
        .int()
        .min(0)
        .default(2000)
        .describe('How long a call waits for a concurrency slot before it is refused as busy.'),
      dailyQuota: z
        .number()
        .int()
        .min(0)
        .default(0)
        .describe('Tool calls per credential per day (0 = unlimited); beyond it calls are refused as quota_exceeded.'),
      maxArgumentDepth: z
        .number()
        .int()
        .min(4)
        .max(1000)
        .default(64)
        .describe(
          'Deepest nesting of objects and arrays accepted in tool arguments; deeper calls are refused as invalid_arguments before validation.',
        ),
      perUser: z
        .object({
          callsPerMinute: limit(LIMIT_TEXT.callsPerMinute).default(0),
          writesPerMinute: limit(LIMIT_TEXT.writesPerMinute).default(0),
          concurrency: z
            .object({
              read: limit(LIMIT_TEXT.read).default(0),
              write: limit(LIMIT_TEXT.write).default(0),
              expensive: limit(LIMIT_TEXT.expensive).default(0),
            })
            .strict()
            .prefault({})
            .describe(
              'Concurrency slots per user and admission class, taken before the server-wide ones; on a shared server, set them below the server-wide slots so no user can hold them all.',
            ),
          dailyQuota: limit(LIMIT_TEXT.dailyQuota).default(0),
          sessions: limit(LIMIT_TEXT.sessions).default(0),
        })
        .strict()
        .prefault({})
        .describe(
          "Defaults over all of one user's credentials together; `exocortex users limits NAME` or a `users` entry's `limits` override them per user.",
        ),
    })
    .strict()
    .prefault({})
    .describe('Limits applied to every tool call before any work, per credential.'),
);
