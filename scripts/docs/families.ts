// The built-in families as the generated references see them: each definition (imported the way the host's
// loader imports it) with its tool schema documents read from its schemas folder. Reads files; writes nothing.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { builtinSources, importFamily } from '../../src/host/families/discover.js';
import type { DefinedFamily } from '../../src/sdk/define-family.js';
import type { ToolSchemaDocument } from '../../src/sdk/types.js';

export const REPO_ROOT = path.resolve(import.meta.dirname, '../..');

export interface DocFamily {
  readonly name: string;
  readonly definition: DefinedFamily;
  /** Tools in the definition's order, each with its schema document and where it lives. */
  readonly tools: ReadonlyArray<{ readonly schema: ToolSchemaDocument; readonly file: string }>;
}

/** Every built-in family under plugins/, sorted by name, as the host would load it. */
export async function loadBuiltinFamilies(): Promise<DocFamily[]> {
  const out: DocFamily[] = [];
  for (const source of builtinSources(path.join(REPO_ROOT, 'plugins'))) {
    const definition = await importFamily(source);
    const tools = Object.keys(definition.tools ?? {}).map((tool) => {
      const abs = fileURLToPath(new URL(`${tool}.json`, definition.schemas));
      return {
        schema: JSON.parse(readFileSync(abs, 'utf8')) as ToolSchemaDocument,
        file: path.relative(REPO_ROOT, abs).split(path.sep).join('/'),
      };
    });
    out.push({ name: definition.name, definition, tools });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
