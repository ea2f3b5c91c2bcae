// The history family's settings: retention, size limits and what a failed recording does to the write.
// Declarations and defaults only.
import type { ToolContext } from '../../src/sdk/index.js';
import type { HistorySettings } from '../../src/generated/history/settings.js';

// The section's shape is generated from its schema below (npm run gen): the two cannot drift.
export type { HistorySettings };

export const HISTORY_DEFAULTS: HistorySettings = {
  retentionDays: 90,
  maxStoreBytes: 1024 * 1024 * 1024,
  maxVersionBytes: 4 * 1024 * 1024,
  onRecordFailure: 'refuse',
  pruneIntervalMinutes: 60,
  listCap: 200,
  maxDiffChars: 20_000,
  maxReadChars: 40_000,
  undoCap: 200,
};

export type HistoryCtx = ToolContext<{ history: HistorySettings }>;

const d = HISTORY_DEFAULTS;
export const historySettingsSchema = {
  type: 'object',
  properties: {
    retentionDays: {
      type: 'integer',
      minimum: 1,
      default: d.retentionDays,
      description:
        'Revisions older than this many days are pruned (in the background, and by `exocortex history prune`).',
    },
    maxStoreBytes: {
      type: 'integer',
      minimum: 1024 * 1024,
      default: d.maxStoreBytes,
      description:
        'Largest total size of the kept versions per vault, in bytes; past it the oldest revisions are pruned first.',
    },
    maxVersionBytes: {
      type: 'integer',
      minimum: 1024,
      default: d.maxVersionBytes,
      description:
        'A note or file larger than this many bytes is not kept: its revision is recorded as skipped (visible in list_revisions).',
    },
    onRecordFailure: {
      enum: ['refuse', 'write'],
      default: d.onRecordFailure,
      description:
        'When a prior version cannot be recorded (database full or failing): `refuse` the write (nothing lost, the default) or `write` it anyway, unrecorded.',
    },
    pruneIntervalMinutes: {
      type: 'integer',
      minimum: 1,
      default: d.pruneIntervalMinutes,
      description: 'How often the background prune runs, in minutes.',
    },
    listCap: {
      type: 'integer',
      minimum: 1,
      default: d.listCap,
      description: 'Most revisions one list_revisions or list_deleted_notes page returns.',
    },
    maxDiffChars: {
      type: 'integer',
      minimum: 1000,
      default: d.maxDiffChars,
      description:
        'Longest diff diff_revisions, restore_revision and undo_changes return, in characters (cut beyond, and marked truncated).',
    },
    maxReadChars: {
      type: 'integer',
      minimum: 1000,
      default: d.maxReadChars,
      description: 'Longest content read_revision returns, in characters (cut beyond, and marked truncated).',
    },
    undoCap: {
      type: 'integer',
      minimum: 1,
      default: d.undoCap,
      description: 'Most notes one undo_changes call reverts.',
    },
  },
} as const;
