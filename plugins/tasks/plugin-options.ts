// The recurrence options of the vault's Obsidian Tasks plugin (where the next occurrence goes, created and
// scheduled dates), read from its settings file. Reads only that file; defaults when it is absent or unreadable.
import type { ToolContext } from '../../src/sdk/index.js';
import { TASKS_SETTINGS_FILE } from './statuses.js';

export interface RecurrenceOptions {
  /** The plugin's "next recurrence appears on the line below" (default: above the completed task). */
  nextOnLineBelow: boolean;
  /** The plugin's "set created date on every added task": the next occurrence gets ➕ today. */
  setCreatedDate: boolean;
  /** The plugin's "remove scheduled date on recurrence" (only when the task has a due date). */
  removeScheduled: boolean;
}

export async function recurrenceOptions(ctx: ToolContext<unknown>): Promise<RecurrenceOptions> {
  const out: RecurrenceOptions = { nextOnLineBelow: false, setCreatedDate: false, removeScheduled: false };
  try {
    const data = JSON.parse((await ctx.vault.fs.readAppConfig(TASKS_SETTINGS_FILE)) ?? '{}') as Record<string, unknown>;
    out.nextOnLineBelow = data.recurrenceOnNextLine === true;
    out.setCreatedDate = data.setCreatedDate === true;
    out.removeScheduled = data.removeScheduledDateOnRecurrence === true;
  } catch {
    // no Tasks settings in this vault (or unreadable): the plugin's defaults apply
  }
  return out;
}
