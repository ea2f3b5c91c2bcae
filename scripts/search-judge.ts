// Judging helper for the search evaluation's set: a full scan of every note in the judged corpora for the
// patterns given (each a case-insensitive regular expression; `a|b` for alternatives), listing each note that
// matches at least --min of them with how often each matched, best first, so the judge reads every candidate
// and decides which ones answer. Never writes the corpora.
// Usage: node --import tsx scripts/search-judge.ts [--corpora DIR] [--vault NAME] [--min N] PATTERN...
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { benchCorpora, notesOnDisk } from '../test/fixtures/corpus.js';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    corpora: { type: 'string', default: benchCorpora().root },
    vault: { type: 'string' },
    min: { type: 'string' },
    limit: { type: 'string', default: '40' },
  },
});
const patterns = positionals.map((p) => new RegExp(p, 'giu'));
const min = args.min ? Number(args.min) : Math.max(1, patterns.length);
const rows: Array<{ path: string; hits: number[]; matched: number }> = [];
for (const rel of notesOnDisk(args.corpora)) {
  if (args.vault && !rel.startsWith(`${args.vault}/`)) continue;
  const text = `${rel}\n${readFileSync(path.join(args.corpora, rel), 'utf8')}`;
  const hits = patterns.map((re) => text.match(re)?.length ?? 0);
  const matched = hits.filter((h) => h > 0).length;
  if (matched >= min) rows.push({ path: rel, hits, matched });
}
rows.sort((a, b) => b.matched - a.matched || b.hits.reduce((x, y) => x + y, 0) - a.hits.reduce((x, y) => x + y, 0));
console.log(`${rows.length} notes match at least ${min} of ${patterns.length} patterns`);
for (const r of rows.slice(0, Number(args.limit))) console.log(`${r.matched} [${r.hits.join(',')}] ${r.path}`);
