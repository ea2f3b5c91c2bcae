// Pure windowing for read results: content offset/limit, the #N outline of truncated reads, and the
// metadata budget that drops whole fields (never truncates them in place). No I/O.
import type { Heading } from '../../../src/markdown/index.js';
import { Refusal, textWindow } from '../../../src/sdk/index.js';

export interface ContentWindow {
  content: string;
  truncated: boolean;
  offset: number;
  next_offset?: number;
  total_chars: number;
}

/**
 * `text` from `offset`, at most `budget` UTF-16 units, cut by the SDK's textWindow: never between a surrogate
 * pair's halves, except when the window is the one unit a budget of 1 allows (always a step forward: a window
 * that stopped short of a pair's first half would be empty, and a pager would ask for it again for ever).
 */
export function windowContent(text: string, offset: number, budget: number): ContentWindow {
  const total = text.length;
  if (offset > total)
    throw new Refusal('invalid_arguments', {
      problems: `offset ${offset} is past the end of the content (${total} chars)`,
    });
  if (offset === total && total > 0)
    throw new Refusal('invalid_arguments', {
      problems: `offset ${offset} is exactly the end of the content (${total} chars); there is nothing more to read`,
    });
  const { content, next_offset } = textWindow(text, offset, budget);
  return {
    content,
    truncated: next_offset !== null || offset > 0,
    offset,
    ...(next_offset !== null ? { next_offset } : {}),
    total_chars: total,
  };
}

export interface OutlineEntry {
  ordinal: string;
  depth: number;
  text: string;
  line: number;
  /** Section body size in bytes. */
  size: number;
}

/** Outline entries until the JSON budget is spent; `omitted` counts the rest. */
export function budgetOutline(outline: Heading[], budget: number): { entries: OutlineEntry[]; omitted: number } {
  const entries: OutlineEntry[] = [];
  let used = 0;
  for (const h of outline) {
    const e: OutlineEntry = { ordinal: `#${h.ordinal}`, depth: h.depth, text: h.text, line: h.line, size: h.size };
    const cost = JSON.stringify(e).length + 1;
    if (used + cost > budget) break;
    used += cost;
    entries.push(e);
  }
  return { entries, omitted: outline.length - entries.length };
}

/** Field names in the order they are dropped when metadata is over budget. */
export const METADATA_DROP_ORDER = ['frontmatter', 'frontmatter_yaml', 'tags', 'heading', 'title'] as const;

/** Drop whole metadata fields (in METADATA_DROP_ORDER) until their JSON fits `budget`; reports what went. */
export function budgetMetadata<T extends Record<string, unknown>>(
  meta: T,
  budget: number,
): { meta: Partial<T>; omissions: string[] } {
  const out: Record<string, unknown> = { ...meta };
  const omissions: string[] = [];
  const size = (): number =>
    METADATA_DROP_ORDER.reduce((n, k) => n + (out[k] === undefined ? 0 : JSON.stringify(out[k]).length), 0);
  for (const k of METADATA_DROP_ORDER) {
    if (size() <= budget) break;
    if (out[k] === undefined) continue;
    omissions.push(`${k}: omitted, over the metadata budget of ${budget} chars`);
    delete out[k];
  }
  return { meta: out as Partial<T>, omissions };
}

export function lfNormalise(s: string): string {
  return s.replace(/\r\n?/g, '\n');
}
