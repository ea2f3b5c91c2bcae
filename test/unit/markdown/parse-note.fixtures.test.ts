// Fixture tests: test/fixtures/markdown/<case>/input.md -> expected.json (the whole NoteModel).
// Regenerate after an intended change with UPDATE_FIXTURES=1, then review the diff.
import t from 'tap';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseNote } from '../../../src/markdown/index.js';

const root = fileURLToPath(new URL('../../fixtures/markdown/', import.meta.url));
const cases = readdirSync(root, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

t.ok(cases.length >= 10, 'at least ten fixture cases');

for (const name of cases) {
  t.test(name, async (t) => {
    const dir = join(root, name);
    const bytes = readFileSync(join(dir, 'input.md'));
    const path = existsSync(join(dir, 'path.txt')) ? readFileSync(join(dir, 'path.txt'), 'utf8').trim() : `${name}.md`;
    const model = parseNote(bytes, { path, chunkTokens: 128 });
    const expectedFile = join(dir, 'expected.json');
    if (process.env.UPDATE_FIXTURES === '1' || !existsSync(expectedFile)) {
      writeFileSync(expectedFile, `${JSON.stringify(model, null, 2)}\n`);
    }
    t.same(JSON.parse(JSON.stringify(model)), JSON.parse(readFileSync(expectedFile, 'utf8')));
    for (const link of model.links)
      t.equal(bytes.subarray(link.start, link.end).toString('utf8'), link.raw, `link ${link.raw} slices back`);
  });
}
