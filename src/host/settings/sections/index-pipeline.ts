// Host settings, section `index`: The index pipeline.
import { z } from 'zod';
import { section } from './section.js';

export const indexSection = section(
  'restart',
  z
    .object({
      watch: z
        .boolean()
        .default(true)
        .describe(
          'Watch the vault for outside changes (false: only reconcile passes and write-through from our own tools).',
        ),
      debounceMs: z
        .number()
        .int()
        .min(0)
        .max(10000)
        .default(100)
        .describe('Quiet time after a burst of filesystem events before they are indexed.'),
      reconcileSeconds: z
        .number()
        .min(0)
        .default(300)
        .describe(
          'Seconds between reconcile passes that catch anything the watcher missed (0 = only the initial pass).',
        ),
      maxNoteBytes: z
        .number()
        .int()
        .min(1)
        .default(5 * 1024 * 1024)
        .describe('Larger notes are quarantined (listed, not indexed) without being read.'),
      batchSize: z
        .number()
        .int()
        .min(1)
        .max(1000)
        .default(200)
        .describe(
          "Notes committed per database transaction. A batch costs about 20 statements whatever its size, each a round trip to the database, so larger batches index faster; a tool's write that arrives meanwhile waits for the running transaction (during a first index on 2 cores, up to ~0.5 s at 200, ~0.15 s at 50; docs/performance.md).",
        ),
      parseTaskSize: z.number().int().min(1).max(1000).default(25).describe('Notes per worker-pool parse task.'),
      prefetchBatches: z
        .number()
        .int()
        .min(1)
        .max(8)
        .default(2)
        .describe('Batches read and parsed ahead of the one being written.'),
      readConcurrency: z.number().int().min(1).max(256).default(16).describe('Concurrent file reads within a batch.'),
      inlineParseMaxBytes: z
        .number()
        .int()
        .min(0)
        .default(16 * 1024)
        .describe(
          'Write-through notes up to this many bytes are parsed on the event loop, larger ones in the worker pool. Parsing is linear, at most a few ms per KiB on adversarial text (docs/performance.md), so this bounds the event-loop time of one parse.',
        ),
      groupCommitWaitMs: z
        .number()
        .int()
        .min(0)
        .max(1000)
        .default(10)
        .describe(
          "How long a write-through batch may wait for the vault's other write calls in flight, so they share one transaction (it never waits for a lone writer; 0 = never wait).",
        ),
      deferredWrites: z
        .boolean()
        .default(true)
        .describe(
          "Write-through in two transactions: the note's row and most contributors' rows first, then the tool answers, then the deferred rows (the keyword index); searches wait for them. false: one transaction, answered after all of it.",
        ),
      rootCheckSeconds: z
        .number()
        .min(0)
        .default(10)
        .describe(
          'Seconds between checks that each vault root is still the folder it was opened as; a vanished or replaced root makes its vault unavailable (on /health, refused as vault_unavailable) until it is back, without disturbing the others (0 = never check).',
        ),
      deferredDelayMs: z
        .number()
        .int()
        .min(0)
        .max(10_000)
        .default(200)
        .describe(
          'Longest the deferred rows of a write-through wait before their transaction; a note written again meanwhile is derived once (0 = right after each batch).',
        ),
    })
    .strict()
    .prefault({})
    .describe('The live index pipeline (initial scan, watcher, reconcile passes, write-through).'),
);
