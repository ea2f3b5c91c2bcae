// The SDK's public surface is what src/sdk/index.ts names, one by one: no `export *` (which would make every
// helper a module exports for a sibling public), only re-exports of the SDK's own modules, and every name it
// promises resolves. A family that needs something the entry lacks gets it exported here, by name.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import ts from 'typescript';

const root = path.resolve(import.meta.dirname, '../../..');
const ENTRY = 'src/sdk/index.ts';

/** Why each statement of an entry module is not a named re-export of an SDK module; empty when all are. */
export function entryProblems(source: string): string[] {
  const sf = ts.createSourceFile(ENTRY, source, ts.ScriptTarget.ES2022, true);
  const problems: string[] = [];
  for (const st of sf.statements) {
    const text = st.getText().split('\n')[0];
    if (!ts.isExportDeclaration(st)) {
      problems.push(`not a re-export: ${text}`);
      continue;
    }
    if (!st.exportClause || ts.isNamespaceExport(st.exportClause))
      problems.push(`export * is not a named export: ${text}`);
    const spec = st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier) ? st.moduleSpecifier.text : '';
    if (!spec.startsWith('./')) problems.push(`re-exports something outside src/sdk: ${text}`);
  }
  return problems;
}

t.test('the SDK entry names every export', async (t) => {
  t.same(entryProblems(readFileSync(path.join(root, ENTRY), 'utf8')), []);
});

t.test(
  'the check fails on a star export, a namespace export, a reach outside the SDK or a local definition',
  async (t) => {
    t.match(entryProblems("export * from './refusals.js';"), [/export \*/]);
    t.match(entryProblems("export type * from './types.js';"), [/export \*/]);
    t.match(entryProblems("export * as q from './query/index.js';"), [/export \*/]);
    t.match(entryProblems("export { Host } from '../host/host.js';"), [/outside src\/sdk/]);
    t.match(entryProblems('export const x = 1;'), [/not a re-export/]);
    t.same(
      entryProblems("export { defineTool } from './define-tool.js';\nexport type { ToolContext } from './types.js';"),
      [],
    );
  },
);

/** The value names the entry re-exports (type-only names are the compiler's to check: npm run lint). */
function valueNames(source: string): string[] {
  const sf = ts.createSourceFile(ENTRY, source, ts.ScriptTarget.ES2022, true);
  return sf.statements
    .filter((st): st is ts.ExportDeclaration => ts.isExportDeclaration(st) && !st.isTypeOnly)
    .flatMap((st) => (st.exportClause && ts.isNamedExports(st.exportClause) ? [...st.exportClause.elements] : []))
    .filter((el) => !el.isTypeOnly)
    .map((el) => el.name.text);
}

t.test('every value the entry names exists at run time, and families find what they rely on', async (t) => {
  const sdk = (await import('../../../src/sdk/index.js')) as Record<string, unknown>;
  const names = valueNames(readFileSync(path.join(root, ENTRY), 'utf8'));
  t.ok(names.length > 50, `${names.length} values named`);
  t.same(
    names.filter((n) => sdk[n] === undefined),
    [],
    'no named value is undefined',
  );
  t.same(Object.keys(sdk).sort(), [...names].sort(), 'the module exports exactly what the entry names');
  for (const name of ['defineFamily', 'defineTool', 'Refusal', 'clampLimit', 'serviceRef'])
    t.ok(names.includes(name), `${name} is public`);
  t.notOk(names.includes('startFamilyTestServer'), 'the test kit, which starts a host, is not part of the SDK');
});

t.test("the test kit is the package's own entry, on the host's side", async (t) => {
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    exports: Record<string, { import?: string }>;
  };
  t.equal(manifest.exports['./testkit']?.import, './dist/src/host/testing/testkit.js', 'exocortex/testkit');
  const kit = (await import('../../../src/host/testing/testkit.js')) as Record<string, unknown>;
  for (const name of ['startFamilyTestServer', 'refusalOf', 'textOf']) t.type(kit[name], 'function', name);
});
