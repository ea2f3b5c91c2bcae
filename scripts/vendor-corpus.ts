// Builds test/fixtures/corpus/ (the trimmed corpus the tests use) from a full vaults-public-v1 copy, and
// writes its MANIFEST.tsv. Run by hand when the selection changes; never run by tests, never edits the source.
// Usage: node --import tsx scripts/vendor-corpus.ts <path to vaults-public-v1>
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { manifestOf } from '../test/fixtures/corpus-manifest.js';

const source = process.argv[2];
if (!source || !existsSync(path.join(source, 'ATTRIBUTION.md'))) {
  console.error('usage: vendor-corpus <path to vaults-public-v1> (the folder holding ATTRIBUTION.md and LICENSES/)');
  process.exit(2);
}
const target = path.resolve(import.meta.dirname, '../test/fixtures/corpus');

/** Whole vaults, less raster screenshots (nothing a test reads; 8 of the 10 MB). */
const WHOLE = ['obsidian-tasks-contributing', 'obsidian-tasks-demo', 'obsidian-tasks-docs'];
const LEFT_OUT = /\.(png|jpe?g|gif|webp)$/i;
/** From the large CJK vault, only the notes tests name (link-rules, move-file). */
const PICKED: Record<string, string[]> = {
  'oldwinter-knowledge-garden': [
    'Calendar/Daily notes/2023-05-04.md',
    'Calendar/Daily notes/国人如何使用chatGPT.md',
    'Cards/永久笔记/PPV.md',
    'Atlas/Canvas/PPV人生管理系统.canvas',
  ],
};

const TRIM_NOTE = `# This copy is trimmed (test/fixtures/corpus/)

A subset of the corpus described below, vendored so that \`npm test\` needs nothing beside the checkout.
Built by \`node --import tsx scripts/vendor-corpus.ts <vaults-public-v1>\`; every file is a byte-for-byte
copy of the corpus file of the same path, and \`MANIFEST.tsv\` here lists each with its size and SHA-256
(checked by test/unit/fixtures/corpus-manifest.test.ts).

- \`${WHOLE.join('`, `')}\`: whole vaults, less their raster
  images (\`*.png\`, \`*.jpg\`, \`*.gif\`, \`*.webp\`), which no test reads. Links and embeds to those images are therefore unresolved here.
- \`oldwinter-knowledge-garden\`: only the ${PICKED['oldwinter-knowledge-garden'].length} files the tests name
  (${PICKED['oldwinter-knowledge-garden'].map((f) => `\`${f}\``).join(', ')}).
- \`LICENSES/\` is copied whole; the corpus's own \`STATS.md\` and \`MANIFEST.tsv\` describe the full corpus
  and are not copied. Benchmarks use the full corpus at \`../shared/corpora/vaults-public-v1\` when present.

The original attribution follows unchanged.

---
`;

function walk(root: string, rel = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(root, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...walk(root, p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

rmSync(target, { recursive: true, force: true });
mkdirSync(target, { recursive: true });
const copy = (rel: string) => {
  mkdirSync(path.dirname(path.join(target, rel)), { recursive: true });
  cpSync(path.join(source, rel), path.join(target, rel));
  chmodSync(path.join(target, rel), 0o644); // the source is read-only; a checkout is not
};
for (const f of walk(source, 'LICENSES')) copy(f);
for (const vault of WHOLE) for (const f of walk(source, vault)) if (!LEFT_OUT.test(f)) copy(f);
for (const [vault, files] of Object.entries(PICKED)) for (const f of files) copy(`${vault}/${f}`);
copy('ATTRIBUTION.md');
writeFileSync(
  path.join(target, 'ATTRIBUTION.md'),
  `${TRIM_NOTE}\n${readFileSync(path.join(target, 'ATTRIBUTION.md'), 'utf8')}`,
);
const manifest = manifestOf(target);
writeFileSync(path.join(target, 'MANIFEST.tsv'), manifest.text);
console.error(
  `vendor-corpus: ${manifest.rows.length} files, ${manifest.rows.reduce((s, r) => s + r.bytes, 0)} bytes in ${path.relative(process.cwd(), target)}`,
);
