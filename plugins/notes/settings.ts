// The notes family's configuration: one `notes` section (JSON Schema with defaults) and its TS shape.
// Declarations only; handlers read the validated values from ctx.settings.notes, never from here.
import type { JsonSchema, ToolContext } from '../../src/sdk/index.js';

export type Granularity = 'daily' | 'weekly' | 'monthly' | 'quarterly' | 'yearly';

export interface PeriodicDefault {
  folder: string;
  format: string;
}

export interface NotesSettings {
  /** Frontmatter blocks larger than this (UTF-8 bytes of the YAML) are never parsed: reads serve them raw, writes are refused. */
  maxFrontmatterBytes: number;
  /** Notes up to this size are parsed on the event loop; larger ones in the worker pool. */
  inlineParseMaxBytes: number;
  read: { maxChars: number; maxBatch: number; headChars: number; maxLineCount: number; maxNoteBytes: number };
  write: { maxNoteBytes: number; preconditionRequired: boolean };
  list: { defaultLimit: number; maxLimit: number };
  regex: { timeoutMs: number; maxOccurrences: number };
  rename: { maxNotes: number };
  move: { maxRewritesPerNote: number };
  diff: { context: number };
  guide: { files: string[]; maxChars: number };
  periodic: Record<Granularity, PeriodicDefault>;
}

export type NotesCtx = ToolContext<{ notes: NotesSettings }>;

const int = (def: number, min = 1, max = 1_000_000_000): JsonSchema => ({ type: 'integer', minimum: min, maximum: max, default: def });
const periodic = (folder: string, format: string): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  default: {},
  properties: { folder: { type: 'string', default: folder }, format: { type: 'string', minLength: 1, default: format } },
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
      type: 'object', additionalProperties: false, default: {},
      properties: {
        maxChars: int(40_000, 1_000),
        maxBatch: int(10, 1, 100),
        headChars: int(200, 1, 10_000),
        maxLineCount: int(2_000, 1, 100_000),
        maxNoteBytes: int(10 * 1024 * 1024, 1024),
      },
    },
    write: {
      type: 'object', additionalProperties: false, default: {},
      properties: { maxNoteBytes: int(10 * 1024 * 1024, 1024), preconditionRequired: { type: 'boolean', default: false } },
    },
    list: { type: 'object', additionalProperties: false, default: {}, properties: { defaultLimit: int(50, 1, 10_000), maxLimit: int(500, 1, 10_000) } },
    regex: { type: 'object', additionalProperties: false, default: {}, properties: { timeoutMs: int(1_000, 10, 60_000), maxOccurrences: int(10_000, 1) } },
    rename: { type: 'object', additionalProperties: false, default: {}, properties: { maxNotes: int(5_000, 1) } },
    move: { type: 'object', additionalProperties: false, default: {}, properties: { maxRewritesPerNote: int(10_000, 1) } },
    diff: { type: 'object', additionalProperties: false, default: {}, properties: { context: int(3, 0, 100) } },
    guide: {
      type: 'object', additionalProperties: false, default: {},
      properties: { files: { type: 'array', items: { type: 'string', minLength: 1 }, default: ['CLAUDE.md', 'AGENTS.md'] }, maxChars: int(20_000, 100) },
    },
    periodic: {
      type: 'object', additionalProperties: false, default: {},
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
