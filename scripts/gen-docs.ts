// npm run docs: writes the generated references (docs/configuration.md, docs/tools.md, docs/refusals.md) from
// the settings schemas, schemas/ and the refusal catalog. `--check` writes nothing and exits 1 when one is stale.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DOCS_COMMAND, generatedDocs } from './docs/all.js';
import { REPO_ROOT } from './docs/families.js';

const check = process.argv.includes('--check');
const stale: string[] = [];
for (const [rel, content] of await generatedDocs()) {
  const file = path.join(REPO_ROOT, rel);
  const current = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  if (current === content) continue;
  stale.push(rel);
  if (!check) writeFileSync(file, content);
}
if (check && stale.length) {
  console.error(`docs: stale ${stale.join(', ')}; run ${DOCS_COMMAND} and commit the result`);
  process.exit(1);
}
console.error(stale.length ? `docs: wrote ${stale.join(', ')}` : 'docs: up to date');
// Family modules may leave timers or pools behind; the references are written, so stop here.
process.exit(0);
