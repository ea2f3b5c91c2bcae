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
      batchSize: z
        .number()
        .int()
        .min(1)
        .default(1000)
        .describe(
          'Most usage rows written per insert: under sustained calls a batch waits for this many (or flushIntervalMs). An insert costs the embedded engine about 2 ms whatever its size, so a row costs it a quarter to two fifths less at 1000 than at 200 (bench/audit); the larger insert holds the database ~15 ms at a time.',
        ),
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
