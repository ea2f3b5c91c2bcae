// What a credential may do, as scopes: `read` and `readwrite` over every family, or per family
// `<family>:read`, `<family>:write` (which includes reading) and `<family>:*`; `*` in place of a family
// means every family. A credential's scopes are one space-separated string (as OAuth writes them).

/** One scope, e.g. `read`, `readwrite`, `tasks:write`, `files:read`, `transfer:*`. */
export type Scope = string;

const FAMILY = /^(?:\*|[a-z][a-z0-9-]{0,63})$/;
const ACCESS = new Set(['read', 'write', '*']);

/** Why this scope is not one, or undefined when it is. */
export function scopeProblem(scope: string): string | undefined {
  if (scope === 'read' || scope === 'readwrite') return undefined;
  const [family, access, ...rest] = scope.split(':');
  if (access === undefined || rest.length > 0) return `"${scope}" is not read, readwrite or <family>:read|write|*`;
  if (!FAMILY.test(family))
    return `"${family}" in "${scope}" is not a family name (lowercase letters, digits, dashes) or *`;
  if (!ACCESS.has(access)) return `"${access}" in "${scope}" is not read, write or *`;
  return undefined;
}

/**
 * A scope string split and checked, duplicates dropped, in a stable order. Throws an Error naming the
 * first scope that is not one, or when there is none.
 */
export function parseScopes(text: string): Scope[] {
  const scopes = [...new Set(text.split(/[\s,]+/).filter(Boolean))];
  if (scopes.length === 0) throw new Error('no scope given (read, readwrite or <family>:read|write|*)');
  for (const s of scopes) {
    const problem = scopeProblem(s);
    if (problem) throw new Error(problem);
  }
  return scopes.sort();
}

/** Whether these scopes let a credential call the read tools, prompts and resources of a family. */
export function mayRead(scopes: readonly Scope[], family: string): boolean {
  return scopes.some((s) => s === 'read' || s === 'readwrite' || grants(s, family, 'read'));
}

/** Whether these scopes let a credential call the write tools of a family. */
export function mayWrite(scopes: readonly Scope[], family: string): boolean {
  return scopes.some((s) => s === 'readwrite' || grants(s, family, 'write'));
}

/** Whether the scopes reach beyond reading in any family (for listings: "read" or "read+write"). */
export function writesAnything(scopes: readonly Scope[]): boolean {
  return scopes.some((s) => s === 'readwrite' || s.endsWith(':write') || s.endsWith(':*'));
}

/** The scope that would let a credential do this, for refusal messages. */
export function scopeNeeded(family: string, write: boolean): Scope {
  return `${family}:${write ? 'write' : 'read'}`;
}

function grants(scope: string, family: string, want: 'read' | 'write'): boolean {
  const i = scope.indexOf(':');
  if (i < 0) return false;
  const f = scope.slice(0, i);
  const a = scope.slice(i + 1);
  if (f !== '*' && f !== family) return false;
  return a === '*' || a === 'write' || (want === 'read' && a === 'read');
}
