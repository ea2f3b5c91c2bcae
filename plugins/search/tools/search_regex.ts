// search_regex: a JavaScript regex (or a path glob) over note paths and/or note lines, line-numbered.
// The regex runs on a killable thread under one time budget; output is bounded and says when it cut.
import { sql } from 'kysely';
import picomatch from 'picomatch';
import {
  defineTool,
  mapLimit,
  Refusal,
  type ToolContext,
  clampLimit,
  cursorPaging,
  folderScope,
  offsetPager,
  underFolder,
} from '../../../src/sdk/index.js';
import { RegexSession } from '../regex/runner.js';
import type { RegexFileResult } from '../regex/match.js';
import type { SearchSettingsSection } from '../settings.js';
import { quote } from '../render-util.js';
import type { SearchTools } from '../../../src/generated/search/index.js';

type SearchRegexInput = SearchTools['search_regex']['input'];
type SearchRegexOutput = SearchTools['search_regex']['output'];
type RegexResultRow = SearchRegexOutput['results'][number];

// The cursor is a position in the scope's notes in path order: the next page scans on from it.
const pages = offsetPager('search_regex');

export default defineTool<SearchTools['search_regex']>({
  async handler(input: SearchRegexInput, ctx: ToolContext<SearchSettingsSection>): Promise<SearchRegexOutput> {
    const s = ctx.settings.search.regex;
    const glob = input.is_glob ?? false;
    const scope = input.scope ?? (glob ? 'path' : 'content');
    if (glob && scope !== 'path')
      ctx.refuse('invalid_arguments', {
        problems: 'is_glob matches paths only; use scope "path" (or leave scope out)',
      });
    const flags = input.ignore_case ? 'i' : '';
    if (!glob) {
      try {
        new RegExp(input.pattern, flags);
      } catch (e) {
        ctx.refuse('invalid_arguments', {
          problems: `pattern is not a valid regular expression: ${(e as Error).message.slice(0, 160)}`,
        });
      }
    }
    const limit = clampLimit(input.limit, s.maxLimit, 20);
    const maxMatches = Math.min(input.max_matches_per_file ?? 5, s.maxMatchesPerFile);
    const within = folderScope(input.folder);
    const folder = within.folder;
    const start = pages.start(ctx, input);
    const all = (
      await sql<{ path: string }>`SELECT path FROM notes WHERE vault_id = ${ctx.vault.id}
        AND ${underFolder(sql`path`, within)} ORDER BY path`.execute(ctx.db)
    ).rows.map((r) => r.path);
    const paths = all.slice(start);
    const base = { pattern: input.pattern, scope, glob, folder, files_total: all.length };
    const next = (scanned: number) => pages.next(ctx, input, start, scanned, start + scanned < all.length);
    const results: RegexResultRow[] = [];
    let chars = 0;
    let cutReason: string | null = null;
    const add = (r: RegexFileResult): boolean => {
      const row = { path: r.path, path_match: r.pathMatch, match_count: r.matchCount, matches: r.matches };
      const size = r.path.length + 40 + r.matches.reduce((a, m) => a + m.text.length + 12, 0);
      if (chars + size > s.maxOutputChars && results.length > 0) {
        cutReason = `output budget of ${s.maxOutputChars} characters reached`;
        return false;
      }
      chars += size;
      results.push(row);
      if (results.length >= limit) {
        cutReason = `limit of ${limit} files reached`;
        return false;
      }
      return true;
    };
    if (glob) {
      const isMatch = picomatch(input.pattern, { nocase: !!input.ignore_case, dot: true });
      let scanned = 0;
      for (const p of paths) {
        if (isMatch(p)) {
          const before = results.length;
          const go = add({ path: p, pathMatch: true, matchCount: 0, matches: [] });
          if (results.length > before) scanned++;
          if (!go) break;
        } else scanned++;
      }
      return {
        ...base,
        files_scanned: scanned,
        skipped: 0,
        count: results.length,
        cut: cutReason !== null && scanned < paths.length,
        cut_reason: scanned < paths.length ? cutReason : null,
        stopped: null,
        results,
        next_cursor: next(scanned),
      };
    }
    const session = new RegexSession(s.timeoutMs, ctx.signal);
    let scanned = 0;
    let skipped = 0;
    let stopped: string | null = null;
    try {
      outer: for (let at = 0; at < paths.length; at += s.batchFiles) {
        const slice = paths.slice(at, at + s.batchFiles);
        const files =
          scope === 'path'
            ? slice.map((path) => ({ path }))
            : await mapLimit(slice, s.readConcurrency, async (path) => {
                try {
                  return { path, text: await ctx.vault.fs.readText(path, { maxBytes: s.maxFileBytes }) };
                } catch (e) {
                  if (!(e instanceof Refusal)) throw e;
                  skipped++; // too large, not UTF-8, or gone since indexed: the path can still match
                  return { path };
                }
              });
        const outcome = await session.run({
          source: input.pattern,
          flags,
          matchPath: scope !== 'content',
          maxMatches,
          lineChars: s.lineChars,
          files,
        });
        if (!outcome.ok) {
          if (outcome.reason === 'failed')
            ctx.refuse('invalid_arguments', {
              problems: `the regular expression failed: ${(outcome.message ?? '').slice(0, 160)}`,
            });
          stopped =
            outcome.reason === 'deadline'
              ? `time budget of ${s.timeoutMs} ms spent after ${scanned} of ${paths.length} notes; results are partial (simplify the pattern, avoid nested quantifiers, or narrow with folder)`
              : 'the call was cancelled; results are partial';
          break;
        }
        for (const r of outcome.results) {
          const before = results.length;
          if (!add(r)) {
            // A file the output budget refused is not counted as scanned: the next page starts with it.
            scanned += slice.indexOf(r.path) + (results.length > before ? 1 : 0);
            break outer;
          }
        }
        scanned += slice.length;
        ctx.client.progress(scanned, paths.length, 'notes scanned');
      }
    } finally {
      await session.close();
    }
    const cut = cutReason !== null && scanned < paths.length;
    return {
      ...base,
      files_scanned: scanned,
      skipped,
      count: results.length,
      cut,
      cut_reason: cut ? cutReason : null,
      stopped,
      results,
      next_cursor: next(scanned),
    };
  },
  render(o: SearchRegexOutput): string {
    const what = o.glob ? `glob ${quote(o.pattern)}` : `/${o.pattern}/`;
    const lines = [
      `search_regex ${what} scope=${o.scope}${o.folder ? ` folder=${o.folder}/` : ''} — ${o.count} files (scanned ${o.files_scanned} of ${o.files_total} notes${o.skipped ? `, ${o.skipped} unreadable as text` : ''})`,
    ];
    if (o.stopped) lines.push(`note: stopped early: ${o.stopped}`);
    if (o.cut) lines.push(`note: ${o.cut_reason}; more notes may match`);
    if (!o.results.length && !o.stopped) lines.push('no matches');
    for (const r of o.results) {
      const extra =
        r.match_count > r.matches.length
          ? ` (${r.match_count} matching lines, ${r.matches.length} shown)`
          : r.match_count
            ? ` (${r.match_count} matching lines)`
            : '';
      lines.push(`${r.path}${r.path_match && !o.glob ? ' [path matches]' : ''}${extra}`);
      for (const m of r.matches) lines.push(`  ${m.line}: ${m.text}`);
    }
    if (o.next_cursor) lines.push(`more: cursor=${o.next_cursor}`);
    return lines.join('\n');
  },
  // Over the result budget fewer files are shown; next_cursor scans on from the first note not shown.
  paging: cursorPaging((o: SearchRegexOutput) => o.results.length),
});
