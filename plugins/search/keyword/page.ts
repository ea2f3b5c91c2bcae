// The page's rows of a keyword ranking, on either path: paths and titles, where each matched unit sits (title or
// body), the `why` per row, and snippets cut from a window of the note around its first match (not ts_headline).
import { sql } from 'kysely';
import type { Database } from '../../../src/sdk/index.js';
import { cjkSnippet, escapeRegExp, termSnippet } from '../ranking/snippet.js';
import { hasCjk, isSingleCjk } from './cjk.js';
import type { Scored } from './memory-score.js';
import type { KeywordOptions, KeywordResult, KeywordHit } from './options.js';
import type { QueryPlan } from './query-parse.js';

/** Characters of a note read for a snippet (termSnippet), and how far before the first match they start. */
const SNIPPET_WINDOW = 2400;
const SNIPPET_LEAD = 600;
/** Characters of a snippet row read with the page: a window that starts at the note's opening fits. */
const SNIPPET_READ = SNIPPET_WINDOW + SNIPPET_LEAD;
/** Query lexemes looked for (strpos) to place the window: a long question's first ones suffice. */
const SNIPPET_PROBES = 8;

/** A tsquery matching one lexeme (a lone CJK character as the prefix of its bigrams). */
export function lexemeQuery(lexeme: string): string {
  return `'${lexeme.replace(/'/g, "''")}'${isSingleCjk(lexeme) ? ':*' : ''}`;
}

/** The vault's change stamp as a query read it (rev, and the note count the stats row holds). */
export interface Stamp {
  readonly rev: number;
  readonly docs: number;
}

/** The page's rows: paths, titles, where each lexeme matched, snippets for the first `snippetRows`. */
export async function render(
  db: Database,
  query: string,
  plan: QueryPlan,
  units: Array<{ perConfig: number[][] }>,
  lexemes: string[],
  ranked: Scored[],
  tw: number,
  o: KeywordOptions,
  capped: boolean,
  stampOf?: number,
): Promise<KeywordResult & { stamp?: Stamp }> {
  const termsTotal = plan.units.length;
  const ids = ranked.map((x) => x.id);
  const snipIds = ids.slice(0, o.snippetRows);
  const cjk = hasCjk(query);
  // Where each lexeme sits in the title: known to the memory ranker, asked of the title vector otherwise.
  const titlesKnown = ranked.every((s) => s.inTitle);
  const titleCols = titlesKnown
    ? sql`NULL::boolean[]`
    : sql`ARRAY[${sql.join(lexemes.map((l) => sql`(k.title_tsv @@ ${lexemeQuery(l)}::tsquery)`))}]`;
  // A snippet row's window is SNIPPET_WINDOW characters from a little before the first place a query lexeme occurs
  // (a lexeme being the start of most words it stems) in the note's first snippetScanChars; no lexeme there: the
  // note's opening. The note's first SNIPPET_READ characters are read with the page (PostgreSQL decompresses only
  // that prefix of a stored body), and the rest up to snippetScanChars only for a row whose window is not inside
  // them. Reading snippetScanChars for every row, and finding the lexemes with lower()/strpos, took most of a long
  // question's time on long notes. The snippet is made from the window here (termSnippet), not by ts_headline.
  const probes = [...new Set(lexemes.filter((l) => l.length >= 2 || hasCjk(l)).map((l) => l.toLowerCase()))].slice(
    0,
    SNIPPET_PROBES,
  );
  const probe = probes.length ? new RegExp(probes.map(escapeRegExp).join('|'), 'iu') : undefined;
  const firstRead = Math.min(SNIPPET_READ, o.snippetScanChars);
  const stampCols =
    stampOf === undefined
      ? sql``
      : sql`, (SELECT s.rev FROM search_keyword_stats s WHERE s.vault_id = ${stampOf}) AS stamp_rev, (SELECT s.docs FROM search_keyword_stats s WHERE s.vault_id = ${stampOf}) AS stamp_docs`;
  const details = await sql<{
    note_id: string;
    path: string;
    title: string;
    head: string;
    in_title: boolean[] | null;
    scan: string | null;
    /** Stored bytes of the body (no decompression): at least its length in characters. */
    bytes: number;
    stamp_rev?: string | number | null;
    stamp_docs?: string | number | null;
  }>`
    SELECT k.note_id, n.path, n.title, k.head, ${titleCols} AS in_title ${stampCols},
           CASE WHEN k.note_id = ANY(${snipIds}::bigint[]) THEN left(k.body, ${firstRead}) END AS scan,
           octet_length(k.body) AS bytes
    FROM search_keyword k JOIN notes n ON n.id = k.note_id
    WHERE k.note_id = ANY(${ids}::bigint[])`.execute(db);
  const further = details.rows.filter(
    // (`left` counts characters, JS UTF-16 units: a prefix holding astral characters is longer than firstRead.)
    (d) => d.scan !== null && d.scan.length >= firstRead && d.bytes > firstRead && !windowInside(d.scan, probe),
  );
  if (further.length) {
    const more = await sql<{
      note_id: string;
      scan: string;
    }>`SELECT note_id, left(body, ${o.snippetScanChars}) AS scan FROM search_keyword WHERE note_id = ANY(${further.map((d) => d.note_id)}::bigint[])`.execute(
      db,
    );
    const byNote = new Map(more.rows.map((r) => [r.note_id, r.scan]));
    for (const d of further) d.scan = byNote.get(d.note_id) ?? d.scan;
  }
  for (const d of details.rows) if (d.scan) d.scan = snippetWindow(d.scan, probe);
  const byId = new Map(details.rows.map((d) => [Number(d.note_id), d]));
  const hits: KeywordHit[] = [];
  for (const s of ranked) {
    const d = byId.get(s.id);
    if (!d) continue;
    const inTitle = lexemes.map((_, i) => (s.inTitle ? s.inTitle[i] : d.in_title?.[i] === true) && s.tf[i] > 0);
    const inBody = lexemes.map((_, i) => s.tf[i] - (inTitle[i] ? tw : 0) > 0.5);
    const matchedIn: Array<'title' | 'body'> = [];
    if (inTitle.some(Boolean) || s.exact) matchedIn.push('title');
    if (inBody.some(Boolean)) matchedIn.push('body');
    const onlyTitle = matchedIn.length === 1 && matchedIn[0] === 'title';
    let snippet =
      onlyTitle || !d.scan
        ? null
        : termSnippet(
            d.scan,
            [...lexemes, ...plan.units.flatMap((u) => u.shown.split(/[^\p{L}\p{N}]+/u))],
            o.snippetChars,
          );
    if (!onlyTitle && cjk && d.scan && (!snippet || !snippet.includes('«')))
      snippet =
        cjkSnippet(
          d.scan,
          plan.units.map((u) => u.shown),
          o.snippetChars,
        ) ?? snippet;
    const unitIn = (flags: boolean[]) => units.map((u) => u.perConfig.some((slotsOf) => slotsOf.some((i) => flags[i])));
    hits.push({
      noteId: s.id,
      path: d.path,
      title: d.title,
      score: s.exact ? 1 + s.score : s.score,
      match: s.match,
      exactTitle: s.exact,
      matchedIn,
      termsMatched: s.hits.filter(Boolean).length,
      termsTotal,
      snippet,
      head: d.head,
      explain: explainRow(plan, s, unitIn(inTitle), unitIn(inBody)),
    });
  }
  const d0 = details.rows[0];
  const stamp =
    stampOf !== undefined && d0 ? { rev: Number(d0.stamp_rev ?? 0), docs: Number(d0.stamp_docs ?? 0) } : undefined;
  return {
    hits,
    termsTotal,
    capped,
    allCount: hits.filter((h) => h.match === 'all').length,
    dropped: plan.dropped,
    ...(stamp ? { stamp } : {}),
  };
}

/** The stretch of a note's text a snippet is made from: SNIPPET_WINDOW characters from a little before the first probe hit. */
function snippetWindow(text: string, probe: RegExp | undefined): string {
  const at = probe ? text.search(probe) : -1;
  if (at <= SNIPPET_LEAD) return text.slice(0, SNIPPET_WINDOW);
  let start = at - SNIPPET_LEAD;
  // Never start on the second half of a surrogate pair.
  const code = text.charCodeAt(start);
  if (code >= 0xdc00 && code <= 0xdfff) start++;
  return text.slice(start, start + SNIPPET_WINDOW);
}

/** Whether the first probe hit's window lies inside `text` (so reading further would not change the snippet). */
function windowInside(text: string, probe: RegExp | undefined): boolean {
  const at = probe ? text.search(probe) : -1;
  return at >= 0 && Math.max(0, at - SNIPPET_LEAD) + SNIPPET_WINDOW <= text.length;
}

/** The matched units, heaviest first: `shown where weight`, where is t (title), b (body) or t+b. At most six. */
function explainRow(plan: QueryPlan, s: Scored, unitTitles: boolean[], unitBodies: boolean[]): string {
  return plan.units
    .map((u, i) => ({ u, i, w: s.unitScores[i] ?? 0, t: unitTitles[i] === true, b: unitBodies[i] === true }))
    .filter((x) => x.t || x.b)
    .sort((a, b) => b.w - a.w)
    .slice(0, 6)
    .map(({ u, w, t, b }) => `${u.shown} ${t && b ? 't+b' : t ? 't' : 'b'} ${w.toFixed(2)}`)
    .concat(s.expansion ? [`feedback ${s.expansion.toFixed(2)}`] : [])
    .concat(s.proximity ? [`near ${s.proximity.toFixed(2)}`] : [])
    .join(' · ');
}
