// Host settings, section `audit`: The audit log of tool calls.
import { z } from 'zod';
import { section } from './section.js';

export const auditSection = section(
  'restart',
  z
    .object({
      enabled: z
        .boolean()
        .default(true)
        .describe(
          'Record one usage_logs row per tool call (tool, principal, truncated arguments, duration, size, outcome).',
        ),
      paramsMaxChars: z
        .number()
        .int()
        .min(0)
        .default(200)
        .describe('Arguments are stored truncated to this many characters.'),
      batchSize: z.number().int().min(1).default(200).describe('Usage rows written per insert.'),
      flushIntervalMs: z
        .number()
        .int()
        .min(10)
        .default(500)
        .describe('Longest a partial batch of usage rows waits before it is written.'),
      maxQueue: z
        .number()
        .int()
        .min(1)
        .default(10000)
        .describe('Most usage rows buffered; beyond it the oldest are dropped and counted.'),
    })
    .strict()
    .prefault({})
    .describe('The usage log: one row per tool call, written in batches.'),
);
