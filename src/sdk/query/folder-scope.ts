// The one meaning of a tool's `folder` argument, shared by every family: normalisation and the SQL filter.
// Pure: refuses traversal before any query runs, and never touches the vault.
import { sql, type RawBuilder } from 'kysely';
import { Refusal } from '../refusals.js';

/** A normalised folder: `folder` is '' for the whole vault, else `a/b`; `prefix` is '' or `a/b/`. */
export interface FolderScope {
  readonly folder: string;
  readonly prefix: string;
}

export const WHOLE_VAULT: FolderScope = { folder: '', prefix: '' };

/**
 * `undefined`, `""`, `"."`, `"./"` and `"/"` mean the whole vault; `\` is read as `/`; leading and trailing
 * slashes and `./` steps are dropped (`/x/`, `x\`, `x/`, `./x` all mean `x`); repeated slashes collapse.
 * A `..` component, a hidden one (`.obsidian`), NUL or a lone surrogate is refused as `invalid_path`,
 * the code every vault path refusal carries, so a traversal is refused alike by every tool.
 */
export function folderScope(raw: string | undefined | null): FolderScope {
  if (raw === undefined || raw === null) return WHOLE_VAULT;
  const bad = (reason: string): never => {
    throw new Refusal('invalid_path', { path: raw, reason });
  };
  if (raw.includes('\0')) bad('contains NUL');
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(raw))
    bad('contains a lone surrogate (not representable in UTF-8)');
  const parts = raw
    .trim()
    .replace(/\\/g, '/')
    .split('/')
    .filter((p) => p !== '' && p !== '.');
  for (const part of parts) {
    if (part === '..') bad('relative components are not allowed');
    if (part.startsWith('.')) bad('hidden components (starting with ".") are out of reach');
  }
  const folder = parts.join('/');
  return folder === '' ? WHOLE_VAULT : { folder, prefix: `${folder}/` };
}

/** Whether a vault path lies in the scope (the whole vault holds every path). */
export function inFolder(scope: FolderScope, path: string): boolean {
  return scope.prefix === '' || path.startsWith(scope.prefix);
}

/**
 * SQL: the path column lies in the scope (`true` for the whole vault). An exact prefix test (no LIKE
 * escaping, and no character counts that differ between JS and PostgreSQL for astral characters).
 */
export function underFolder(column: RawBuilder<unknown>, scope: FolderScope): RawBuilder<unknown> {
  if (scope.prefix === '') return sql`true`;
  return sql`starts_with(${column}, ${scope.prefix})`;
}
