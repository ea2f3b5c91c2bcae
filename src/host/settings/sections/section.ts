// One section of the host's settings: its schema and whether a config reload applies it. A 'restart' section
// read once at start-up keeps its old value until the process restarts, and a reload that changes it says so
// in the log (restartOnlyChanges in ../schema.ts); a 'live' one is read again, or applied, on every reload,
// except the keys it names in restartKeys (read once at start, like a restart section's).
import type { z } from 'zod';

export type ReloadMode = 'live' | 'restart';

export interface HostSection<S extends z.ZodType = z.ZodType> {
  readonly reload: ReloadMode;
  readonly schema: S;
  /** In a live section, the keys only a restart applies. */
  readonly restartKeys: readonly string[];
}

export function section<S extends z.ZodType>(
  reload: ReloadMode,
  schema: S,
  options: { restartKeys?: readonly string[] } = {},
): HostSection<S> {
  return { reload, schema, restartKeys: options.restartKeys ?? [] };
}
