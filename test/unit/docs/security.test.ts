// docs/security.md names, for each layer of the threat model, the tests that show its guarantee: every
// test path it names must exist, so a renamed or deleted test cannot leave the document pointing at nothing.
import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const doc = readFileSync(path.join(ROOT, 'docs/security.md'), 'utf8');

t.test('every test the threat model names exists', async (t) => {
  const named = [...new Set([...doc.matchAll(/`(test\/[^`\s]+\.test\.ts)`/g)].map((m) => m[1]))];
  t.ok(named.length >= 10, `the threat model names its tests (${named.length})`);
  for (const rel of named) t.ok(existsSync(path.join(ROOT, rel)), `${rel} exists`);
});

t.test('the threat model table has a row per layer, each with a test', async (t) => {
  const rows = doc.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| Layer') && !l.startsWith('|---'));
  t.ok(rows.length >= 8);
  for (const row of rows) t.match(row, /`test\/[^`]+\.test\.ts`/, `${row.slice(2, 40)}… names a test`);
});
