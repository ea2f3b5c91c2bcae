// Every built-in family's tools, walked from its schemas and its tool modules: each tool lives in
// tools/<tool_name>.ts, whose default export is that tool (or, for transfer, the factory that builds it
// from the family's injected deps), declared typed from its generated signature (so tsc fails when handler
// and schema disagree), and every refusal code the file throws is declared by the family or the SDK.
import t from 'tap';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REFUSALS, familyRefusalSpecs } from '../../../src/sdk/refusals.js';
import type { DefinedFamily } from '../../../src/sdk/define-family.js';

const root = path.resolve(import.meta.dirname, '../../..');
const THROWS = /(?:\.refuse|new Refusal|Refusals\.refusal|Refusals\.refuse)\(\s*'([a-z][a-z0-9_]*)'/g;
const families = readdirSync(path.join(root, 'plugins')).filter((f) =>
  statSync(path.join(root, 'plugins', f)).isDirectory(),
);

for (const name of families) {
  t.test(`family ${name}`, async (t) => {
    const def = (await import(pathToFileURL(path.join(root, 'plugins', name, 'family.ts')).href))
      .default as DefinedFamily;
    const schemaDir = path.join(root, 'schemas', name);
    const schemaTools = readdirSync(schemaDir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => JSON.parse(readFileSync(path.join(schemaDir, f), 'utf8')).name as string)
      .sort();
    t.same(Object.keys(def.tools ?? {}).sort(), schemaTools, 'its tools are exactly its schemas');
    const own = new Set(Object.keys(familyRefusalSpecs(def)));
    const mapName = `${name.replace(/(^|-)([a-z])/g, (_, _d, c: string) => c.toUpperCase())}Tools`;
    const toolDir = path.join(root, 'plugins', name, 'tools');
    const files = readdirSync(toolDir)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => f.slice(0, -3))
      .sort();
    t.same(files, schemaTools, 'tools/ holds one file per tool, named after it, and nothing else');
    for (const tool of schemaTools) {
      const file = path.join(toolDir, `${tool}.ts`);
      if (!existsSync(file)) continue;
      const src = readFileSync(file, 'utf8');
      t.ok(
        src.includes(`defineTool<${mapName}['${tool}']>`) || src.includes(`ToolFor<${mapName}['${tool}']>`),
        `${tool} is declared typed from ${mapName}['${tool}']`,
      );
      const mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
      if (typeof mod.default === 'function')
        t.equal(
          typeof (def.tools as Record<string, { handler?: unknown }>)[tool]?.handler,
          'function',
          `${tool}: the default export is the factory of the family's module`,
        );
      else
        t.equal(
          mod.default,
          (def.tools as Record<string, unknown>)[tool],
          `${tool}: the default export is the family's module`,
        );
      for (const m of src.matchAll(THROWS))
        t.ok(own.has(m[1]) || Object.hasOwn(REFUSALS, m[1]), `${tool} throws ${m[1]}, declared by ${name} or the SDK`);
    }
  });
}
