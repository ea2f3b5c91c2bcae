// Unified diffs of two texts (`a/<path>` → `b/<path>`), as every dry run and history diff shows them.
// Pure: the worker pool's `unified-diff` task and small inline diffs call the same function.
import { createTwoFilesPatch } from 'diff';

export function unifiedPatch(path: string, before: string, after: string, context = 3): string {
  return createTwoFilesPatch(`a/${path}`, `b/${path}`, before, after, undefined, undefined, { context });
}
