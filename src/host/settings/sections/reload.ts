// Host settings, section `reload`: Config reload.
import { z } from 'zod';
import { section } from './section.js';

export const reloadSection = section(
  'live',
  z
    .object({
      watchConfig: z
        .boolean()
        .default(true)
        .describe('Watch the config file and hot-reload families when it changes (SIGHUP reloads too).'),
    })
    .strict()
    .prefault({})
    .describe('Hot reload of families.'),
);
