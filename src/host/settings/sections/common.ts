// Pieces several host settings sections share: ports, account names and the per-user limits.
import { z } from 'zod';

export const port = z.number().int().min(0).max(65535);

/** User and vault names: what the CLI, keys and logs show; no spaces or slashes, so they need no quoting. */
export const ACCOUNT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$/;
export const accountName = z
  .string()
  .regex(ACCOUNT_NAME, 'a name: letters, digits, . _ - (at most 80), starting with a letter or digit');

export const limit = (what: string) => z.number().int().min(0).describe(what);

/** What each per-user limit means: one text for admission.perUser (the defaults) and a user's own `limits`. */
export const LIMIT_TEXT = {
  callsPerMinute:
    'Rate bucket per user over all tool calls of all their credentials (0: only the per-credential bucket).',
  writesPerMinute:
    'Rate bucket per user over write-class calls of all their credentials (0: only the per-credential bucket).',
  read: 'Concurrent read-class calls one user may run (0: only the server-wide slots).',
  write: 'Concurrent write-class calls one user may run (0: only the server-wide slots).',
  expensive: 'Concurrent expensive-class calls one user may run (0: only the server-wide slots).',
  dailyQuota: 'Tool calls per user per day over all their credentials (0: unlimited).',
  sessions:
    'Open stateful MCP sessions and subscriptions/listen streams one user may hold over all their credentials, counted together (0: only the per-credential and server caps).',
} as const;

/** Limits over all of one user's credentials together (0 = no limit of that kind beyond the others). */
export const userLimitsSchema = z
  .object({
    callsPerMinute: limit(LIMIT_TEXT.callsPerMinute),
    writesPerMinute: limit(LIMIT_TEXT.writesPerMinute),
    concurrency: z
      .object({
        read: limit(LIMIT_TEXT.read),
        write: limit(LIMIT_TEXT.write),
        expensive: limit(LIMIT_TEXT.expensive),
      })
      .strict()
      .partial()
      .describe('Concurrency slots per user and admission class, taken before the server-wide ones.'),
    dailyQuota: limit(LIMIT_TEXT.dailyQuota),
    sessions: limit(LIMIT_TEXT.sessions),
  })
  .strict()
  .partial();

export type UserLimitsOverride = z.infer<typeof userLimitsSchema>;
