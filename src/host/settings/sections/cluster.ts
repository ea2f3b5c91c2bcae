// Host settings, section `cluster`: several processes over one PostgreSQL: who owns which vault and where calls are forwarded.
import { z } from 'zod';
import { section } from './section.js';

export const clusterSection = section(
  'live',
  z
    .object({
      ownVaults: z
        .boolean()
        .default(true)
        .describe(
          'Bid for vault leases. false: this process owns no vault and forwards every call to the owner, within its own families and read-only switches (a read-only search deployment).',
        ),
      internalUrl: z
        .string()
        .regex(/^https?:\/\/[^/?#@]+\/?$/, 'an http(s)://host:port base URL')
        .nullable()
        .default(null)
        .describe(
          "Where the other processes reach this one to forward a vault's calls (http://10.0.0.5:3000). null: the listen address, 127.0.0.1 when it listens on every interface.",
        ),
      leaseIntervalMs: z
        .number()
        .int()
        .min(100)
        .max(10_000)
        .default(500)
        .describe(
          'How often a process renews its presence and bids for vaults without an owner; a failed owner is replaced within about this long. A lease statement slower than six rounds (at least 3 s) counts as a lost lease connection: the process stops serving its vaults and bids again.',
        ),
    })
    .strict()
    .prefault({})
    .describe(
      'Several processes on one PostgreSQL server (ignored with embedded PGlite): each vault has one owner under a lease held in PostgreSQL; any process accepts any request and forwards it to the owner.',
    ),
  // Read once at start: whether this process bids for leases, and the lease round's length.
  { restartKeys: ['ownVaults', 'leaseIntervalMs'] },
);
