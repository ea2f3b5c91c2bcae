// Host settings, section `admin`: The admin socket the CLI talks to.
import { z } from 'zod';
import { section } from './section.js';

export const adminSection = section(
  'restart',
  z
    .object({
      socketPath: z
        .string()
        .min(1)
        .nullable()
        .default(null)
        .describe(
          'Path of the local admin socket the CLI and `exocortex stdio` use to reach the running server. null: inside the embedded database directory; a PostgreSQL deployment without a path has no admin channel.',
        ),
    })
    .strict()
    .prefault({})
    .describe('The local admin channel.'),
);
