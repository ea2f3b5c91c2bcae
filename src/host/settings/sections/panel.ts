// Host settings, section `panel`: The operator panel (/admin).
import { z } from 'zod';
import { section } from './section.js';

export const panelSection = section(
  'live',
  z
    .object({
      enabled: z
        .boolean()
        .default(true)
        .describe(
          'Serve the operator panel at /admin on the HTTP listener. Nobody can sign in until a user has a password (`exocortex users passwd NAME`) or a one-time code (`exocortex users login-link NAME`), so it is on by default; false answers 404 under /admin.',
        ),
      sessionTtlSeconds: z
        .number()
        .int()
        .min(1)
        .max(30 * 24 * 3600)
        .default(12 * 3600)
        .describe(
          'How long a panel sign-in lasts (absolute, from sign-in). Sessions live in the database (panel_sessions): disabling the user or signing out ends them at once.',
        ),
      pageSize: z
        .number()
        .int()
        .min(10)
        .max(500)
        .default(50)
        .describe('Rows one panel table shows (keys, agent edits, zero-result queries); every query is bounded by it.'),
    })
    .strict()
    .prefault({})
    .describe(
      'The operator panel (/admin): server-rendered pages for vaults, usage, credentials, agent edits, index and search, and the danger zone. Sign-in failures share oauth.signInFailures per address.',
    ),
  // Read once at start: the panel's routes are registered (and its code loaded) only when it is on.
  { restartKeys: ['enabled'] },
);
