// Host settings, section `vault`: The default vault: its folder and name.
import { z } from 'zod';
import { DEFAULT_VAULT_NAME, DEFAULT_VAULT_PATH, VAULT_NAME_MAX_CHARS } from '../locations.js';
import { section } from './section.js';

export const vaultSection = section(
  'restart',
  z
    .object({
      path: z
        .string()
        .min(1)
        .default(DEFAULT_VAULT_PATH)
        .describe(
          'The vault root folder (created, with a welcome note, when missing or empty). Relative paths resolve against the directory the server starts in; `~/` is the home directory.',
        ),
      name: z
        .string()
        .min(1)
        .max(VAULT_NAME_MAX_CHARS)
        .default(DEFAULT_VAULT_NAME)
        .describe("The vault's name in the database and in the server's instructions to clients."),
      obsidianName: z
        .string()
        .min(1)
        .max(200)
        .nullable()
        .default(null)
        .describe(
          "The vault's name as Obsidian knows it; when set, results that name a note carry an `obsidian://open?vault=…&file=…` deep link. null: no deep links.",
        ),
      allowNamedStaging: z
        .boolean()
        .default(false)
        .describe(
          'Start on a filesystem without O_TMPFILE by staging writes under named dot-files instead (less safe against a crash mid-write).',
        ),
      readOnly: z
        .boolean()
        .default(false)
        .describe(
          "Serve the vault read-only: no write tool of any family is listed or runs, and every change to vault files (uploads included) is refused as vault_read_only. Family readOnly switches hide only that family's own write tools.",
        ),
      allowHardLinks: z
        .boolean()
        .default(false)
        .describe(
          'Serve, index and write files whose link count is above 1. Off by default: a hard link can make a file outside the vault readable and writable through it.',
        ),
      openWriterWaitMs: z
        .number()
        .int()
        .min(0)
        .max(10_000)
        .default(100)
        .describe(
          'How long a replace waits for another program (an editor writing in place, an appender) to close a note it holds open for writing before refusing with concurrent_write.',
        ),
    })
    .strict()
    .prefault({})
    .describe('The vault this server serves.'),
);
