// The notes family's configuration: one `notes` section (JSON Schema with defaults); its TS shape is generated.
// Declarations only; handlers read the validated values from ctx.settings.notes, never from here.
import type { JsonSchema, ToolContext } from '../../src/sdk/index.js';
import type { NotesSettings } from '../../src/generated/notes/settings.js';

// The section's shape is generated from notesSettingsSchema below (npm run gen): the two cannot drift.
export type { NotesSettings };

export type Granularity = keyof NotesSettings['periodic'];

export type PeriodicDefault = NotesSettings['periodic'][Granularity];

export type NotesCtx = ToolContext<{ notes: NotesSettings }>;

const int = (def: number, min = 1, max = 1_000_000_000): JsonSchema => ({
  type: 'integer',
  minimum: min,
  maximum: max,
  default: def,
});
/** A schema with its meaning, for the generated configuration reference. */
const d = (description: string, schema: JsonSchema): JsonSchema => ({ ...schema, description });
const periodic = (folder: string, format: string): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: {
    folder: {
      type: 'string',
      default: folder,
      description: 'Folder holding these notes (vault-relative; empty: the vault root).',
    },
    format: {
      type: 'string',
      minLength: 1,
      default: format,
      description: 'File name format in moment.js tokens (`[text]` is literal).',
    },
  },
});

export const notesSettingsSchema: JsonSchema = {
  type: 'object',
  default: {},
  properties: {
    maxFrontmatterBytes: {
      ...int(64 * 1024, 1024, 16 * 1024 * 1024),
      description:
        'Largest frontmatter block (UTF-8 bytes of the YAML between the --- fences) that is parsed. A larger block is served by read_note as raw text with frontmatter_error {code: "too_large"}, and a write whose result carries one is refused as frontmatter_too_large.',
    },
    inlineParseMaxBytes: {
      ...int(16 * 1024, 0, 1024 * 1024 * 1024),
      description:
        'Notes up to this many bytes are parsed on the event loop when a tool needs their structure; larger ones are parsed in the worker pool. Parsing is linear, at most a few ms per KiB on adversarial text (see docs/performance.md), so this bounds the event-loop time one parse can take.',
    },
    read: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'Reads.',
      properties: {
        maxChars: d(
          'Characters one read returns at most (content, outline or metadata); a longer result is cut and says how to continue.',
          int(40_000, 1_000),
        ),
        maxBatch: d(
          'Paths per read_multiple_notes / get_notes_info call; also caps get_recent_periodic_notes counts.',
          int(10, 1, 100),
        ),
        headChars: d('Length of the opening text in summaries.', int(200, 1, 10_000)),
        maxLineCount: d("Upper bound on read_note_lines' line_count.", int(2_000, 1, 100_000)),
        maxNoteBytes: d('Largest note a read loads, in bytes.', int(10 * 1024 * 1024, 1024)),
      },
    },
    write: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'Writes.',
      properties: {
        maxNoteBytes: d(
          'Largest note a write produces or checks expected_hash against, in bytes.',
          int(10 * 1024 * 1024, 1024),
        ),
        preconditionRequired: {
          type: 'boolean',
          default: false,
          description: 'Make expected_hash mandatory on every write except creation.',
        },
      },
    },
    list: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'Listings (list_notes, get_recent).',
      properties: {
        defaultLimit: d('Page size when limit is not given.', int(50, 1, 10_000)),
        maxLimit: d('Upper bound on limit.', int(500, 1, 10_000)),
      },
    },
    regex: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'Regular-expression replace (replace_in_note).',
      properties: {
        timeoutMs: d('Hard time budget of one regex replace; past it nothing is written.', int(1_000, 10, 60_000)),
        maxOccurrences: d('Most replacements in one call.', int(10_000, 1)),
      },
    },
    rename: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'rename_tag.',
      properties: { maxNotes: d('Most notes one rename_tag call may change.', int(5_000, 1)) },
    },
    move: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: "move_note's link rewrite.",
      properties: {
        maxRewritesPerNote: d(
          'Most link rewrites in one linking note; a move needing more is aborted.',
          int(10_000, 1),
        ),
      },
    },
    diff: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'Dry-run diffs.',
      properties: { context: d('Context lines around each change.', int(3, 0, 100)) },
    },
    guide: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'The vault guide (get_vault_guide, vault://guide).',
      properties: {
        files: {
          type: 'array',
          items: { type: 'string', minLength: 1 },
          default: ['CLAUDE.md', 'AGENTS.md'],
          description: 'Conventions files at the vault root; the first found is served.',
        },
        maxChars: d('Most characters of the conventions file served.', int(20_000, 100)),
      },
    },
    periodic: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description:
        "Periodic notes (get_periodic_note, get_recent_periodic_notes): folder and file name format per granularity, used when the vault's periodic-notes or daily-notes plugin settings cannot be read.",
      properties: {
        daily: periodic('Daily Notes', 'YYYY-MM-DD'),
        weekly: periodic('Weekly Notes', 'gggg-[W]ww'),
        monthly: periodic('Monthly Notes', 'YYYY-MM'),
        quarterly: periodic('Quarterly Notes', 'YYYY-[Q]Q'),
        yearly: periodic('Yearly Notes', 'YYYY'),
      },
    },
  },
};
