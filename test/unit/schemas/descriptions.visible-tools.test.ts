// A served description never names a tool the caller cannot see (issue 43 item 4): for each way a tool
// leaves tools/list — no embedding provider, the core profile, a read-only credential, a family switched
// off — every listed tool's description, as served, is checked for the names of the tools left out.
import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import { describeForVisible } from '../../../src/sdk/tool-description.js';
import type { ToolSchemaDocument } from '../../../src/sdk/types.js';

const root = new URL('../../../schemas/', import.meta.url);
const docs: Array<ToolSchemaDocument & { family: string }> = [];
for (const family of readdirSync(root, { withFileTypes: true }))
  if (family.isDirectory())
    for (const file of readdirSync(new URL(`${family.name}/`, root)).filter((f) => f.endsWith('.json')))
      docs.push({ ...JSON.parse(readFileSync(new URL(`${family.name}/${file}`, root), 'utf8')), family: family.name });

const EMBEDDING_TOOLS = new Set(['find_related', 'semantic_search']);
const writes = (d: ToolSchemaDocument) => !d.annotations.readOnlyHint && !d.writesOnlyWith?.length;

const scenarios: Array<[string, (d: (typeof docs)[number]) => boolean]> = [
  ['no embedding provider', (d) => !EMBEDDING_TOOLS.has(d.name)],
  ['core profile', (d) => d.profiles?.includes('core') ?? false],
  [
    'core profile, no embedding provider',
    (d) => (d.profiles?.includes('core') ?? false) && !EMBEDDING_TOOLS.has(d.name),
  ],
  ['read-only credential', (d) => !writes(d)],
  ['read-only credential, no embedding provider', (d) => !writes(d) && !EMBEDDING_TOOLS.has(d.name)],
  ...[...new Set(docs.map((d) => d.family))].map((f): [string, (d: (typeof docs)[number]) => boolean] => [
    `family ${f} off`,
    (d) => d.family !== f,
  ]),
];

for (const [name, listed] of scenarios) {
  t.test(name, async (t) => {
    const shown = docs.filter(listed);
    const visible = new Set(shown.map((d) => d.name));
    // `search` and `fetch` are also plain words ("a search result"); only snake_case names are unambiguous.
    const hidden = docs.filter((d) => !visible.has(d.name) && d.name.includes('_')).map((d) => d.name);
    for (const d of shown) {
      const served = describeForVisible(d.description, visible);
      const named = hidden.filter((h) => new RegExp(`\\b${h}\\b`).test(served));
      t.same(named, [], `${d.name} names no hidden tool`);
    }
  });
}
