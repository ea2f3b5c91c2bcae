// Line-by-line regex matching of a batch of files for search_regex, self-contained: its source is
// shipped to a killable thread by regex/runner.ts, so no imports, no closures over module state, no I/O.

export interface RegexBatchPayload {
  readonly source: string;
  readonly flags: string;
  /** Match the pattern against each path as well as (when text is present) each line. */
  readonly matchPath: boolean;
  readonly maxMatches: number;
  readonly lineChars: number;
  readonly files: ReadonlyArray<{ readonly path: string; readonly text?: string }>;
}

export interface RegexFileResult {
  readonly path: string;
  readonly pathMatch: boolean;
  /** Lines that matched (all of them, not only those returned). */
  readonly matchCount: number;
  readonly matches: Array<{ line: number; text: string }>;
}

export function regexBatch(p: RegexBatchPayload): RegexFileResult[] {
  const re = new RegExp(p.source, p.flags.replace(/[gy]/g, ''));
  const out: RegexFileResult[] = [];
  for (const file of p.files) {
    const pathMatch = p.matchPath && re.test(file.path);
    let matchCount = 0;
    const matches: Array<{ line: number; text: string }> = [];
    if (file.text !== undefined) {
      const lines = file.text.split(/\r?\n/);
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i];
        const m = re.exec(line);
        if (!m) continue;
        matchCount++;
        if (matches.length >= p.maxMatches) continue;
        const at = m.index;
        const len = m[0].length;
        // A window of lineChars around the match, the match marked «» (zero-length matches unmarked).
        const budget = p.lineChars;
        let start = 0;
        if (line.length > budget) start = Math.max(0, Math.min(at - Math.floor(budget / 4), line.length - budget));
        const end = Math.min(line.length, start + budget);
        const mEnd = Math.min(end, at + len);
        let text =
          len > 0 && at < end
            ? `${line.slice(start, at)}«${line.slice(at, mEnd)}»${line.slice(mEnd, end)}`
            : line.slice(start, end);
        text = `${start > 0 ? '…' : ''}${text.replace(/\t/g, ' ')}${end < line.length ? '…' : ''}`;
        matches.push({ line: i + 1, text });
      }
    }
    if (pathMatch || matchCount > 0) out.push({ path: file.path, pathMatch, matchCount, matches });
  }
  return out;
}
