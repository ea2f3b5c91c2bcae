// Host settings, section `database`: The PostgreSQL the host keeps its state in (PGlite in-process unless a URL is given).
import { z } from 'zod';
import { DEFAULT_PGLITE_MEMORY } from '../../db/engines/pglite-memory.js';
import { DATABASE_URL_PATTERN, DEFAULT_DATABASE_URL } from '../locations.js';
import { section } from './section.js';

export const databaseSection = section(
  'restart',
  z
    .object({
      url: z
        .string()
        .regex(DATABASE_URL_PATTERN, 'must start with pglite:, postgres:// or postgresql://')
        .default(DEFAULT_DATABASE_URL)
        .describe(
          '`pglite:<dir>` for the embedded database (`pglite:memory://` for a throwaway one), or `postgres://…` / `postgresql://…` for a PostgreSQL server.',
        ),
      poolSize: z
        .number()
        .int()
        .min(1)
        .max(100)
        .default(10)
        .describe('Connections to a PostgreSQL server (embedded PGlite always uses one).'),
      pgliteThread: z
        .boolean()
        .default(true)
        .describe(
          'Run embedded PGlite on its own worker thread so SQL never blocks the event loop; false runs it on the main thread (about 100 MiB less memory, slower answers while the index works).',
        ),
      pgliteMaintenanceSeconds: z
        .number()
        .int()
        .min(0)
        .max(3600)
        .default(15)
        .describe(
          "Seconds between the embedded database's maintenance passes, which do what a server's autovacuum would (PGlite runs none): ANALYZE each table once 50 rows plus 10 % of it changed (at most every 5 minutes unless it more than doubled), so the planner stops using plans made on empty tables; and merge the pending lists of the keyword index's GIN indexes. While rows are being written, due tables are also checked every 2 s between passes, so a table that grows fast (a first index) is analysed as it doubles, over a small sample and without the element statistics of its tsvector and array columns (analysed in full once writing stops). 0 turns it off; a PostgreSQL server ignores it.",
        ),
      pgliteSharedBuffersMb: z
        .number()
        .int()
        .min(1)
        .max(4096)
        .default(DEFAULT_PGLITE_MEMORY.sharedBuffersMb)
        .describe(
          "Embedded PGlite's shared_buffers, in MiB. Its memory only grows, so this is resident for good once used: 16 keeps an idle server about 110 MiB lighter than PGlite's own 128; raise it for vaults far past 10k notes on a machine with memory to spare.",
        ),
      pgliteWalBuffersKb: z
        .number()
        .int()
        .min(0)
        .max(262144)
        .refine((v) => v === 0 || v >= 64, 'pgliteWalBuffersKb is 0 (automatic) or at least 64')
        .default(DEFAULT_PGLITE_MEMORY.walBuffersKb)
        .describe("Embedded PGlite's wal_buffers, in KiB; 0: PostgreSQL's automatic 1/32 of the shared buffers."),
      pgliteWorkMemMb: z
        .number()
        .int()
        .min(1)
        .max(2048)
        .default(DEFAULT_PGLITE_MEMORY.workMemMb)
        .describe("Embedded PGlite's work_mem: memory one sort or hash may take before it spills to disk, in MiB."),
      pgliteMaintenanceWorkMemMb: z
        .number()
        .int()
        .min(1)
        .max(4096)
        .default(DEFAULT_PGLITE_MEMORY.maintenanceWorkMemMb)
        .describe(
          "Embedded PGlite's maintenance_work_mem (index builds, the keyword index's pending-list merges), in MiB; what it takes once stays resident.",
        ),
    })
    .strict()
    .prefault({})
    .describe('Where the index, credentials, OAuth state and usage logs are stored.'),
);
