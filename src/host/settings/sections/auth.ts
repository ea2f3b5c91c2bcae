// Host settings, section `auth`: API keys and credentials.
import { z } from 'zod';
import { section } from './section.js';

export const authSection = section(
  'restart',
  z
    .object({
      mintAdminKeyOnFirstStart: z
        .boolean()
        .default(true)
        .describe('Mint and print an admin API key at start when no active key exists.'),
      keyCacheSeconds: z
        .number()
        .min(0)
        .max(300)
        .default(2)
        .describe(
          'How long a verified API key is cached. Creating or revoking a key clears the cache at once (through the admin socket, or a NOTIFY on a shared PostgreSQL).',
        ),
    })
    .strict()
    .prefault({})
    .describe('API keys.'),
);
