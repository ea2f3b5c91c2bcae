// Host settings, sections `families` and `plugins`: which families serve, and third-party ones.
import { z } from 'zod';
import { section } from './section.js';

export const familyToggleSchema = z
  .object({
    enabled: z
      .boolean()
      .default(true)
      .describe('Serve this family (false: its tools, prompts, resources and routes disappear).'),
    readOnly: z.boolean().default(false).describe("Hide and refuse this family's write tools."),
  })
  .strict();

export const familiesSection = section(
  'live',
  z
    .record(
      z.string().regex(/^[a-z][a-z0-9-]{0,39}$/, 'a family name: lowercase letters, digits and -'),
      familyToggleSchema,
    )
    .default({})
    .describe(
      'Per family (by name): `enabled` switches it off or on, `readOnly` hides and refuses its write tools. First-party families are on unless switched off here.',
    ),
);

export const pluginsSection = section(
  'live',
  z
    .array(z.string().min(1))
    .default([])
    .describe('Third-party families: npm package names or paths to a family module or folder.'),
);
