// Pure parsing of a websearch-style query into its units (bare terms and quoted phrases), the
// negated units and whether the user wrote OR, and the plan of evidence units ranked over; no SQL and no I/O here.
import { cjkWordQuery, hasCjk, segmentWords } from './cjk.js';
import { compoundWordQuery, phraseText } from './index-text.js';
import { isFrameWord, isFunctionWord, isQuestion, isQuestionWord } from './stop-words.js';

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

/** One unit of evidence as the index sees it: `text` is websearch syntax over the indexed form. */
export interface QueryUnit {
  /** As the user wrote it (for the ranking explanation). */
  readonly shown: string;
  /** The indexed form: CJK words as bigram phrases, phrases with their CJK runs as bigram runs. */
  readonly text: string;
}

export interface QueryPlan {
  readonly units: QueryUnit[];
  readonly negated: string[];
  /** Words dropped as carrying no evidence (function words, question scaffolding). */
  readonly dropped: string[];
  readonly hasOr: boolean;
  readonly exact: string;
}

/**
 * Turn a parsed query into units of evidence: CJK runs segmented into words (Intl.Segmenter), each word in its
 * indexed form (a compound token such as `task.due` as the phrase of its words); function words always, and question scaffolding when the query reads as a question (its frame
 * words only before its first content word), dropped as long as some unit remains. Quoted phrases and negations are kept as written (CJK runs made bigram runs).
 */
export function planQuery(parsed: ParsedQuery, query: string, dropQuestionWords: boolean): QueryPlan {
  const question = dropQuestionWords && isQuestion(query);
  const candidates: Array<QueryUnit & { drop: boolean }> = [];
  let framing = question;
  for (const unit of parsed.units) {
    if (unit.startsWith('"')) {
      candidates.push({ shown: unit, text: `"${phraseText(unit.slice(1, -1))}"`, drop: false });
      framing = false;
      continue;
    }
    const words = hasCjk(unit) ? segmentWords(unit) : [unit];
    for (const w of words) {
      const clean = hasCjk(w) ? w : w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
      if (!clean) continue;
      const drop = isFunctionWord(clean) || (question && isQuestionWord(clean)) || (framing && isFrameWord(clean));
      if (!drop) framing = false;
      candidates.push({ shown: clean, text: hasCjk(clean) ? cjkWordQuery(clean) : compoundWordQuery(clean), drop });
    }
  }
  const kept = candidates.filter((c) => !c.drop);
  const chosen = kept.length ? kept : candidates;
  const seen = new Set<string>();
  const units: QueryUnit[] = [];
  for (const c of chosen) {
    if (seen.has(c.text.toLowerCase())) continue;
    seen.add(c.text.toLowerCase());
    units.push({ shown: c.shown, text: c.text });
  }
  const negated = parsed.negated.map((n) =>
    n.startsWith('"') ? `"${phraseText(n.slice(1, -1))}"` : hasCjk(n) ? cjkWordQuery(n) : compoundWordQuery(n),
  );
  return {
    units,
    negated,
    dropped: kept.length ? candidates.filter((c) => c.drop).map((c) => c.shown) : [],
    hasOr: parsed.hasOr,
    exact: parsed.exact,
  };
}

/** The websearch text of a plan: its units ANDed (or ORed where the user wrote OR), negations as `-x`. */
export function planText(plan: QueryPlan): string {
  return [plan.units.map((u) => u.text).join(plan.hasOr ? ' OR ' : ' '), ...plan.negated.map((n) => `-${n}`)]
    .filter(Boolean)
    .join(' ');
}
