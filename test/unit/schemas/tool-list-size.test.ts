// The model-facing size of tools/list (name, description as served, input schema) in cl100k tokens, per
// tool and in total, for the `full` profile (every first-party tool, the embedding ones included) and
// `core`. A model pays for this on every turn; the details belong in docs/tools.md (a schema's `details`).
import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import { Tiktoken } from 'js-tiktoken/lite';
import ranks from 'js-tiktoken/ranks/cl100k_base';
import { describeForVisible } from '../../../src/sdk/tool-description.js';
import type { ToolSchemaDocument } from '../../../src/sdk/types.js';

const FULL_BUDGET = 9_000;
const CORE_BUDGET = 4_000;
const TOOL_BUDGET = 400;
const DESCRIPTION_CHARS = 800;

const root = new URL('../../../schemas/', import.meta.url);
const docs: ToolSchemaDocument[] = [];
for (const family of readdirSync(root, { withFileTypes: true }))
  if (family.isDirectory())
    for (const file of readdirSync(new URL(`${family.name}/`, root)).filter((f) => f.endsWith('.json')))
      docs.push(JSON.parse(readFileSync(new URL(`${family.name}/${file}`, root), 'utf8')));

const enc = new Tiktoken(ranks);

function measure(listed: readonly ToolSchemaDocument[]): { total: number; per: Map<string, number> } {
  const visible = new Set(listed.map((d) => d.name));
  const per = new Map<string, number>();
  let total = 0;
  for (const d of listed) {
    const n = enc.encode(d.name + describeForVisible(d.description, visible) + JSON.stringify(d.inputSchema)).length;
    per.set(d.name, n);
    total += n;
  }
  return { total, per };
}

t.test('full profile: every tool and the whole list within budget', async (t) => {
  const { total, per } = measure(docs);
  t.comment(`full: ${docs.length} tools, ${total} cl100k tokens`);
  t.ok(total <= FULL_BUDGET, `full tools/list is ${total} tokens (budget ${FULL_BUDGET})`);
  for (const [name, n] of per) t.ok(n <= TOOL_BUDGET, `${name}: ${n} tokens (budget ${TOOL_BUDGET})`);
});

t.test('core profile: about a dozen tools within its budget', async (t) => {
  const core = docs.filter((d) => d.profiles?.includes('core'));
  const { total } = measure(core);
  t.comment(`core: ${core.length} tools (${core.map((d) => d.name).join(', ')}), ${total} cl100k tokens`);
  t.ok(core.length >= 10 && core.length <= 14, `core lists ${core.length} tools`);
  t.ok(total <= CORE_BUDGET, `core tools/list is ${total} tokens (budget ${CORE_BUDGET})`);
});

t.test('no description over the limit, as served or in full', async (t) => {
  for (const d of docs)
    t.ok(d.description.length <= DESCRIPTION_CHARS, `${d.name}: ${d.description.length} characters`);
});
