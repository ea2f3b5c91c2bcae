// Pure parsing of a websearch-style query into its units (bare terms and quoted phrases), the
// negated units and whether the user wrote OR; no SQL and no I/O here.

export interface ParsedQuery {
  /** Positive units as the user wrote them: `word` or `"a phrase"` (quotes kept). */
  readonly units: string[];
  /** Negated units without the leading `-`. */
  readonly negated: string[];
  /** The user wrote an explicit OR (so AND→OR fill does not apply). */
  readonly hasOr: boolean;
  /** The query normalised for exact title/alias comparison. */
  readonly exact: string;
}

const TOKEN = /(-?)"([^"]*)"?|(\S+)/g;

export function parseQuery(query: string): ParsedQuery {
  const units: string[] = [];
  const negated: string[] = [];
  let hasOr = false;
  for (const m of query.matchAll(TOKEN)) {
    if (m[2] !== undefined) {
      const phrase = m[2].trim();
      if (!phrase) continue;
      (m[1] ? negated : units).push(`"${phrase}"`);
      continue;
    }
    const word = m[3];
    if (word === 'OR') {
      hasOr = true;
      continue;
    }
    if (word.startsWith('-') && word.length > 1) negated.push(word.slice(1));
    else if (word !== '-') units.push(word);
  }
  return { units: dedupe(units), negated: dedupe(negated), hasOr, exact: normaliseTitle(query) };
}

/** Lower-cased, whitespace-collapsed form used for title and alias keys. */
export function normaliseTitle(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
}

/** The OR form of a query: any positive unit, none of the negated ones. */
export function anyQueryText(parsed: ParsedQuery): string {
  return parsed.units.join(' OR ');
}

/** Negated units OR-ed, for `q && !!neg`. Empty when nothing is negated. */
export function negatedQueryText(parsed: ParsedQuery): string {
  return parsed.negated.map((n) => (n.startsWith('"') ? n : n)).join(' OR ');
}

function dedupe(list: string[]): string[] {
  return [...new Set(list)];
}
