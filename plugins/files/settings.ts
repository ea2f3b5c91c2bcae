// The files family's settings (config section `files`): every limit the file tools apply, with defaults.
// Declarations only; handlers read the validated values through ctx.settings.
import type { FilesSettings } from '../../src/generated/files/settings.js';

// The section's shape is generated from its schema below (npm run gen): the two cannot drift.
export type { FilesSettings };

export type FilesCtxSettings = { files: FilesSettings };

export const filesSettingsSchema = {
  type: 'object',
  properties: {
    maxReadBytes: {
      type: 'integer',
      minimum: 1,
      default: 10 * 1024 * 1024,
      description: "Largest file read_file returns (and hashes for delete_file's expected_hash), in bytes.",
    },
    maxWriteBytes: {
      type: 'integer',
      minimum: 1,
      default: 25 * 1024 * 1024,
      description:
        'Largest content write_file accepts after decoding, in bytes (the HTTP body limit is raised to fit it as base64).',
    },
    textWindowChars: {
      type: 'integer',
      minimum: 100,
      default: 100_000,
      description: 'Default text window of read_file, in characters.',
    },
    maxListEntries: { type: 'integer', minimum: 1, default: 1000, description: "Upper bound on list_files' limit." },
    move: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: "move_file's rewrite of links in notes to the moved file.",
      properties: {
        maxNoteBytes: {
          type: 'integer',
          minimum: 1024,
          default: 10 * 1024 * 1024,
          description: 'Notes larger than this are not read for links to a moved file (they are listed as skipped).',
        },
        maxRewritesPerNote: {
          type: 'integer',
          minimum: 1,
          default: 10_000,
          description: 'A move that would rewrite more links than this in one note is aborted.',
        },
        diffContext: {
          type: 'integer',
          minimum: 0,
          maximum: 100,
          default: 3,
          description: 'Lines of context in dry-run diffs.',
        },
      },
    },
  },
} as const;
