// SQL parameters from JS values (lists, JSON, LIKE text), portable across PGlite and node-postgres.
// Pure query fragments; values are always parameters, never spliced into the statement.
import { sql, type RawBuilder } from 'kysely';

/** `ARRAY(...)` of texts, for `col = ANY(${textArray(xs)})`. */
export function textArray(values: readonly string[]): RawBuilder<unknown> {
  return sql`ARRAY(SELECT jsonb_array_elements_text(${JSON.stringify(values)}::jsonb))`;
}

/** `ARRAY(...)` of bigints (note and row ids). */
export function bigintArray(values: readonly (number | bigint)[]): RawBuilder<unknown> {
  return sql`ARRAY(SELECT (jsonb_array_elements_text(${JSON.stringify(values.map(String))}::jsonb))::bigint)`;
}

/** A JSON value as a jsonb parameter. */
export function jsonb(value: unknown): RawBuilder<unknown> {
  return sql`${JSON.stringify(value)}::jsonb`;
}

/** Text with LIKE's wildcards (`%`, `_`) and its escape (`\`) escaped, for `LIKE ${escapeLike(x) + '%'}`. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
