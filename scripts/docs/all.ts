// The generated references, file by file: what `npm run docs` writes and what the staleness test compares.
// Pure apart from loading the built-in families; the output depends only on the sources.
import { loadBuiltinFamilies } from './families.js';
import { renderConfiguration } from './configuration.js';
import { renderRefusals } from './refusals.js';
import { renderTools } from './tools.js';

export const DOCS_COMMAND = 'npm run docs';

/** Repository-relative path → expected content. */
export async function generatedDocs(): Promise<Map<string, string>> {
  const families = await loadBuiltinFamilies();
  return new Map([
    ['docs/configuration.md', renderConfiguration(families)],
    ['docs/tools.md', renderTools(families)],
    ['docs/refusals.md', renderRefusals(families)],
  ]);
}
