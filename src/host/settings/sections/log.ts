// Host settings, section `log`: Logging.
import { z } from 'zod';
import { section } from './section.js';

export const logSection = section(
  'restart',
  z
    .object({
      level: z
        .enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'])
        .default('info')
        .describe('Log level of the JSON lines written to stderr (`silent`: none).'),
    })
    .strict()
    .prefault({})
    .describe('Logging.'),
);
