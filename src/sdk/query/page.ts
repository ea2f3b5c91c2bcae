// Offset paging for listings computed in a stable order and then sliced (links, backlinks, orphans, tags,
// ranked search hits): the cursor is the SDK's codec (versioned, bound to tool, vault and user) carrying the
// offset and a digest of the query it pages, so a cursor is refused on any other query. Pure.
import { createHash } from 'node:crypto';
import { Refusal } from '../refusals.js';
import type { ResultPaging } from '../result-budget.js';
import { cursorCodec, type CursorOwner } from './cursor.js';

/** A page position: rows already listed (`o`) of the query whose digest is `q`. */
interface OffsetKey {
  readonly o: number;
  readonly q: string;
}

/** A short digest of the arguments that choose the rows (key order does not matter); `sizing` is left out. */
function queryDigest(input: Record<string, unknown>, sizing: string): string {
  const chosen = Object.keys(input)
    .filter((k) => k !== 'cursor' && k !== sizing && input[k] !== undefined)
    .sort()
    .map((k) => [k, input[k]]);
  return createHash('sha256').update(JSON.stringify(chosen)).digest('base64url').slice(0, 10);
}

export interface OffsetPager {
  /** Where this page starts: 0 without a cursor. Refuses a cursor of another tool, user, vault or query. */
  start(owner: CursorOwner, input: object): number;
  /**
   * The cursor after a page of `shown` rows that started at `start`, or null at the end. `more` is the
   * total row count, or whether rows are known to follow the page.
   */
  next(owner: CursorOwner, input: object, start: number, shown: number, more: number | boolean): string | null;
}

/** `sizing` names the argument that sizes a page (it may change from page to page). */
export function offsetPager(tool: string, sizing = 'limit'): OffsetPager {
  const codec = cursorCodec<OffsetKey>(
    tool,
    (v): v is OffsetKey =>
      typeof v === 'object' &&
      v !== null &&
      Number.isInteger((v as OffsetKey).o) &&
      (v as OffsetKey).o >= 0 &&
      typeof (v as OffsetKey).q === 'string',
  );
  return {
    start(owner, input) {
      const args = input as Record<string, unknown>;
      const key = codec.decode(owner, args.cursor as string | undefined | null);
      if (!key) return 0;
      if (key.q !== queryDigest(args, sizing))
        throw new Refusal('invalid_arguments', {
          problems: `cursor belongs to another query of ${tool}; page with the same arguments (only ${sizing} may change), or leave cursor out to start again`,
          argument: 'cursor',
        });
      return key.o;
    },
    next(owner, input, start, shown, more) {
      const end = start + shown;
      const left = typeof more === 'number' ? end < more : more;
      if (!left || shown === 0) return null;
      return codec.encode(owner, { o: end, q: queryDigest(input as Record<string, unknown>, sizing) });
    },
  };
}

/**
 * How a cursor-paged tool shrinks to the result budget: fewer rows in the page, and the continuation is the
 * same call with the page's next_cursor. `rows` counts the rows of a page; `limit` names its sizing argument.
 */
export function cursorPaging<I, O extends { readonly next_cursor?: string | null }>(
  rows: (output: O) => number,
  limit = 'limit',
): ResultPaging<I, O> {
  return {
    limit,
    size: rows,
    next: (input, output) => (output.next_cursor ? { ...(input as object), cursor: output.next_cursor } : undefined),
  };
}

/** One window of a long text: `limit` characters from `offset`, never splitting a surrogate pair. */
export function textWindow(
  text: string,
  offset: number,
  limit: number,
): { content: string; next_offset: number | null } {
  const from = Math.min(Math.max(0, offset), text.length);
  let end = Math.min(text.length, from + Math.max(1, limit));
  const code = text.charCodeAt(end - 1);
  if (end < text.length && code >= 0xd800 && code <= 0xdbff && end - 1 > from) end--;
  return { content: text.slice(from, end), next_offset: end < text.length ? end : null };
}

/**
 * How a windowed document shrinks to the result budget: a shorter window (its `limit` in characters), and
 * the continuation is the same call at next_offset. `chars` is the window's length.
 */
export function windowPaging<I, O extends { readonly next_offset?: number | null }>(
  chars: (output: O) => number,
): ResultPaging<I, O> {
  return {
    limit: 'limit',
    size: chars,
    next: (input, output) =>
      output.next_offset === null || output.next_offset === undefined
        ? undefined
        : { ...(input as object), offset: output.next_offset },
  };
}
