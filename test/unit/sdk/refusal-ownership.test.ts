// Every refusal code a built-in family's code can emit is declared by that family or by the SDK catalogue;
// the SDK keeps only host and cross-family codes (each used outside one family), and none used by nothing.
// Static: reads the sources for code literals at the throw sites (ctx.refuse, new Refusal, <family>Refusals).
import t from 'tap';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REFUSALS, familyRefusalSpecs } from '../../../src/sdk/refusals.js';
import type { DefinedFamily } from '../../../src/sdk/define-family.js';

const root = path.resolve(import.meta.dirname, '../../..');
const walk = (dir: string): string[] =>
  readdirSync(dir).flatMap((e) => {
    const p = path.join(dir, e);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') ? [p] : [];
  });
/** Code literals at throw sites: ctx.refuse('x'…), new Refusal('x'…), xRefusals.refuse/refusal('x'…), and { code: 'x' } results. */
const THROWS = /(?:\.refuse|new Refusal|Refusals\.refusal|Refusals\.refuse)\(\s*'([a-z][a-z0-9_]*)'/g;
const codesIn = (files: string[]): Set<string> =>
  new Set(files.flatMap((f) => [...readFileSync(f, 'utf8').matchAll(THROWS)].map((m) => m[1])));

const families = readdirSync(path.join(root, 'plugins')).filter((f) =>
  statSync(path.join(root, 'plugins', f)).isDirectory(),
);
const shared = new Set(Object.keys(REFUSALS));
const usedBy = new Map<string, Set<string>>();

for (const name of families) {
  const files = walk(path.join(root, 'plugins', name));
  const def = (await import(pathToFileURL(path.join(root, 'plugins', name, 'family.ts')).href))
    .default as DefinedFamily;
  const own = new Set(Object.keys(familyRefusalSpecs(def)));
  const emitted = codesIn(files);
  t.test(`family ${name}: every code it emits is its own or the SDK's`, async (t) => {
    for (const code of emitted)
      t.ok(own.has(code) || shared.has(code), `${code} is declared (by ${name} or src/sdk/refusals.ts)`);
    for (const code of own) t.notOk(shared.has(code), `${code} is not also the SDK's`);
    for (const code of own) t.ok(emitted.has(code), `its own ${code} is used`);
  });
  for (const code of emitted) if (shared.has(code)) usedBy.set(code, (usedBy.get(code) ?? new Set()).add(name));
}

t.test('the SDK catalogue holds host and cross-family codes only, each used somewhere', async (t) => {
  const hostFiles = [
    ...walk(path.join(root, 'src/host')),
    ...walk(path.join(root, 'src/sdk')).filter((f) => !f.endsWith('refusals.ts')),
  ];
  const hostText = hostFiles.map((f) => readFileSync(f, 'utf8')).join('\n');
  const inHost = (code: string) => new RegExp(`['"\`]${code}['"\`]`).test(hostText);
  // Codes a family emits for another family's calls through a shared service or hook: the note-write path's
  // ladder (NOTE_WRITER: notes, tasks, history write through it) and the write observers' refusal (any
  // family may observe writes; history does today).
  const crossFamilyByContract = new Set([
    'precondition_required',
    'precondition_unavailable',
    'frontmatter_too_large',
    'write_not_recorded',
  ]);
  for (const code of shared) {
    const families = usedBy.get(code) ?? new Set();
    const host = inHost(code);
    t.ok(host || families.size > 0, `${code} is used (by the host, the SDK or a family)`);
    if (!host && families.size === 1)
      t.ok(
        crossFamilyByContract.has(code),
        `${code}, used only by ${[...families][0]}, belongs to that family's refusals (or is a cross-family contract code)`,
      );
  }
});
