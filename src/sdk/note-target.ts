// The one way a tool turns its `path` argument into a note's vault path: the path as given (`.md` may be
// left off), else the name resolved as a wikilink written at the vault root would be (`Quarks` →
// `physics/Quarks.md`). Several matches are refused with the candidates, never guessed between.
// Reads the index's `notes` rows (and checks the vault only for the exact path); never writes.
import { sql } from 'kysely';
import { buildLinkIndex, resolveLink } from '../markdown/index.js';
import { escapeLike } from './query/sql-params.js';
import type { ToolContext } from './types.js';

/** The vault path as given: separators normalised, a leading `/` dropped, `.md` added when no extension is. */
export function notePathAsGiven(input: string): string {
  const clean = input.replace(/\\/g, '/').replace(/^\/+/, '');
  return /\.md$/i.test(clean) ? clean : `${clean}.md`;
}

/**
 * The note a tool's `path` names. An existing note at the path as given wins; else a link-style target
 * resolved from the vault root among indexed notes; else the path as given (the caller answers
 * not_found, or creates it). Ambiguous names are refused as ambiguous_note with their candidates.
 */
export async function resolveNotePath(ctx: ToolContext<unknown>, input: string): Promise<string> {
  const given = ctx.vault.fs.checkPath(notePathAsGiven(input));
  const target = input.trim().replace(/\\/g, '/').replace(/\.md$/i, '');
  const name = target.slice(target.lastIndexOf('/') + 1).toLowerCase();
  if (name === '' || target.startsWith('/') || target.startsWith('.')) return given;
  // A file at the path as given is always the answer: checked first, a read needs no query (an index
  // transaction holding the embedded database does not delay it).
  if (await ctx.vault.fs.exists(given)) return given;
  // Every note a link to `target` can mean has its file name: the candidates are read by that name only.
  const { rows } = await sql<{ path: string }>`
    SELECT path FROM notes WHERE vault_id = ${ctx.vault.id}
      AND (lower(path) = ${`${name}.md`} OR lower(path) LIKE ${`%/${escapeLike(name)}.md`})
    LIMIT 200`.execute(ctx.db);
  const paths = rows.map((r) => r.path);
  if (paths.includes(given) || paths.length === 0) return given;
  const r = resolveLink(target, '', buildLinkIndex(paths));
  if (r.ambiguous) ctx.refuse('ambiguous_note', { target: input, candidates: r.candidates.slice(0, 20).join(', ') });
  return r.resolved ?? given;
}
