// Host settings, section `tools`: Tool calls: time and result-size budgets.
import { z } from 'zod';
import { section } from './section.js';

export const toolsSection = section(
  'restart',
  z
    .object({
      profile: z
        .enum(['full', 'core'])
        .default('full')
        .describe(
          'Which tools are listed and callable: `full` every tool of the enabled families; `core` about a dozen (read, search, outline, links and backlinks, create, edit, move, tasks, changes) for clients with a tool cap or a small context. Read at start.',
        ),
      callTimeoutMs: z
        .number()
        .int()
        .min(100)
        .default(30000)
        .describe('Deadline of one tool call; past it the call is abandoned and refused as timeout.'),
      maxResultTokens: z
        .number()
        .int()
        .min(1000)
        .max(1_000_000)
        .default(12_000)
        .describe(
          'Most tokens one tool result may hold, its text and structuredContent counted together (cl100k tokens, counted so that CJK text and base64 cannot overshoot; images are not counted). A tool that pages (list_notes, get_changes, list_files, audit_notes, read_note, read_file, fetch, …) shrinks its page or window to fit and says how to continue (cursor, offset); any other result over it is refused as result_too_large. Keep it well under what clients accept (Claude Code: 25,000).',
        ),
    })
    .strict()
    .prefault({})
    .describe('Tool calls.'),
);
