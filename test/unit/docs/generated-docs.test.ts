// The generated references in docs/ are what `npm run docs` writes from today's sources (settings schemas,
// schemas/, the refusal catalog), and every setting in them has a meaning. Fails naming the command to rerun.
import t from 'tap';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { DOCS_COMMAND, generatedDocs } from '../../../scripts/docs/all.js';
import { REPO_ROOT } from '../../../scripts/docs/families.js';

const docs = await generatedDocs();
const committed = (rel: string) => {
  const file = path.join(REPO_ROOT, rel);
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
};

for (const [rel, name] of [
  ['docs/configuration.md', 'generated-docs.configuration: docs/configuration.md matches the settings schemas'],
  ['docs/tools.md', "generated-docs.tools: docs/tools.md matches schemas/ and the families' resources and prompts"],
  ['docs/refusals.md', 'generated-docs.refusals: docs/refusals.md matches the refusal catalog'],
] as const) {
  t.test(name, async (t) => {
    const expected = docs.get(rel);
    t.ok(expected, `${rel} is generated`);
    // Compare whole texts but report briefly: a stale file names the command, not a 2,000-line diff.
    const same = committed(rel) === expected;
    t.ok(same, same ? `${rel} is current` : `${rel} is stale: run ${DOCS_COMMAND} and commit the result`);
  });
}

t.test('generated-docs.settings-described: every setting in the configuration reference has a meaning', async (t) => {
  const undocumented = (docs.get('docs/configuration.md') ?? '')
    .split('\n')
    .filter((l) => l.includes('**undocumented**'))
    .map((l) => l.split('|')[1].trim());
  t.same(undocumented, [], 'add a .describe() (host) or a description (family settings schema) for these');
});

t.test('generated-docs.tools-complete: every schema under schemas/ appears in the tool reference', async (t) => {
  const tools = docs.get('docs/tools.md') ?? '';
  const schemaDir = path.join(REPO_ROOT, 'schemas');
  for (const family of readdirSync(schemaDir).filter((f) => statSync(path.join(schemaDir, f)).isDirectory())) {
    for (const file of readdirSync(path.join(schemaDir, family)).filter((f) => f.endsWith('.json'))) {
      t.match(tools, `schema \`schemas/${family}/${file}\``, `${family}/${file}`);
    }
  }
});

t.test(
  'generated-docs.units: only byte counts are shown in KiB/MiB; counts and MiB settings are shown as they are',
  async (t) => {
    const reference = docs.get('docs/configuration.md') ?? '';
    const rowOf = (key: string) => reference.split('\n').find((l) => l.startsWith(`| \`${key}\``)) ?? '';
    t.match(rowOf('server.bodyLimitBytes'), /`4194304` \(4 MiB\)/, 'a byte count also in MiB');
    t.match(rowOf('server.unauthenticatedBodyLimitBytes'), /`16384` \(16 KiB\)/, 'a byte count also in KiB');
    for (const key of ['server.maxConnections', 'workers.maxHeapMb', 'transfer.import.maxUrlLength']) {
      t.ok(rowOf(key), `${key} is in the reference`);
      t.notMatch(rowOf(key), /KiB\)|MiB\)/, `${key} is not a byte count`);
    }
  },
);
