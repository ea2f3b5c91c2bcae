// Task status meanings: the Tasks plugin's defaults, the vault's Tasks settings file when readable, and
// the operator's tasks.statuses setting (strongest). Reads only the plugin's settings file, never a note.
import type { ToolContext } from '../../src/sdk/index.js';

export type StatusType = 'todo' | 'in_progress' | 'done' | 'cancelled' | 'other';
export const STATUS_FILTERS = {
  open: ['todo', 'in_progress'],
  closed: ['done', 'cancelled'],
  todo: ['todo'],
  in_progress: ['in_progress'],
  done: ['done'],
  cancelled: ['cancelled'],
  other: ['other'],
} as const;

const TASKS_TYPES: Record<string, StatusType> = {
  TODO: 'todo',
  IN_PROGRESS: 'in_progress',
  DONE: 'done',
  CANCELLED: 'cancelled',
  NON_TASK: 'other',
};
/** The Tasks plugin's settings, read through VaultFs.readAppConfig (relative to `.obsidian/`). */
export const TASKS_SETTINGS_FILE = 'plugins/obsidian-tasks-plugin/data.json';

/** Status character → meaning, beyond the parser's defaults (empty when nothing custom is known). */
export async function customStatuses(
  ctx: ToolContext<unknown>,
  configured: Record<string, StatusType>,
): Promise<Map<string, StatusType>> {
  const out = new Map<string, StatusType>();
  try {
    const data = JSON.parse((await ctx.vault.fs.readAppConfig(TASKS_SETTINGS_FILE)) ?? '{}') as {
      statusSettings?: { coreStatuses?: unknown[]; customStatuses?: unknown[] };
    };
    for (const s of [...(data.statusSettings?.coreStatuses ?? []), ...(data.statusSettings?.customStatuses ?? [])]) {
      const { symbol, type } = (s ?? {}) as { symbol?: unknown; type?: unknown };
      if (typeof symbol === 'string' && symbol.length === 1 && typeof type === 'string' && TASKS_TYPES[type])
        out.set(symbol, TASKS_TYPES[type]);
    }
  } catch {
    // no Tasks settings in this vault (or unreadable): the defaults apply
  }
  for (const [ch, type] of Object.entries(configured)) out.set(ch, type);
  return out;
}
