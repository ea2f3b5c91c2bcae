// Renders docs/refusals.md from the refusal catalog in src/sdk/refusals.ts and any codes a built-in family
// declares in its definition (`refusals`): code, whether a retry can help, the sentence and its details.
import { REFUSALS, REFUSAL_LINE_PREFIX, familyRefusalSpecs, type RefusalSpec } from '../../src/sdk/refusals.js';
import type { DocFamily } from './families.js';
import { GENERATED_BANNER, cell, code, table } from './markdown.js';

const HEAD = ['Code', 'Retry can help', 'Sentence', 'Details'];

function rows(catalog: Readonly<Record<string, RefusalSpec>>): string[][] {
  return Object.entries(catalog).map(([name, spec]) => [
    code(name),
    spec.retryable ? 'yes' : 'no',
    cell(spec.sentence),
    spec.details.map(code).join(', ') || '—',
  ]);
}

/** A family's own catalog, when its definition declares one (the contract lets families own their codes). */
function familyCatalog(f: DocFamily): Readonly<Record<string, RefusalSpec>> | undefined {
  const specs = familyRefusalSpecs(f.definition);
  return Object.keys(specs).length ? specs : undefined;
}

export function renderRefusals(families: readonly DocFamily[]): string {
  const out: string[] = [
    '# Refusal codes',
    '',
    GENERATED_BANNER('the catalog in src/sdk/refusals.ts and the refusals families declare in plugins/*/family.ts'),
    '',
    'An expected failure is a refusal, never a thrown error: the tool result has `isError: true`, its text is one sentence',
    `(the template below with \`{name}\` filled from the details), and its last line is \`${REFUSAL_LINE_PREFIX.trim()} {"code":…,"retryable":…,…details}\`,`,
    'single-line JSON a client can parse. *Retry can help* says whether the same call could succeed later unchanged (a rate',
    'limit, a busy slot, an index still catching up); the others need different arguments or a different state of the vault.',
    'A bug is reported as `internal` with a reference to the log line.',
    '',
    '## Host and shared codes',
    '',
    `${Object.keys(REFUSALS).length} codes, from \`src/sdk/refusals.ts\`.`,
    '',
    table(HEAD, rows(REFUSALS)),
    '',
    '## Family codes',
    '',
  ];
  const own = families
    .map((f) => ({ f, catalog: familyCatalog(f) }))
    .filter((x) => x.catalog && Object.keys(x.catalog).length);
  if (!own.length) out.push('No built-in family declares codes of its own; they all use the shared codes above.', '');
  for (const { f, catalog } of own) out.push(`### Family ${code(f.name)}`, '', table(HEAD, rows(catalog!)), '');
  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}
