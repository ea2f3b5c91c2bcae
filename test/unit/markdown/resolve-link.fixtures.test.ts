// Link resolution fixtures, one folder per Obsidian rule (test/fixtures/links/README.md): every link of
// every note in `vault/` resolved against every file of `vault/`, compared with `expected.json`.
import t from 'tap';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildLinkIndex, parseNote, resolveLink } from '../../../src/markdown/index.js';

const ROOT = path.resolve(import.meta.dirname, '../../fixtures/links');
const UPDATE = process.env.UPDATE_FIXTURES === '1';

function filesUnder(dir: string, rel = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...filesUnder(dir, p));
    else out.push(p);
  }
  return out.sort();
}

/** Each note's links with what the resolver makes of them. */
export function resolveVault(vault: string): Record<string, unknown[]> {
  const files = filesUnder(vault);
  const index = buildLinkIndex(files);
  const out: Record<string, unknown[]> = {};
  for (const p of files.filter((f) => f.endsWith('.md'))) {
    const model = parseNote(readFileSync(path.join(vault, p)), { path: p });
    if (model.links.length === 0) continue;
    out[p] = model.links.map((l) => {
      const r = resolveLink(l.target, p, index);
      return {
        raw: l.raw,
        target: l.target,
        ...(l.anchor !== undefined ? { anchor: l.anchor } : {}),
        ...(l.blockRef !== undefined ? { block: l.blockRef } : {}),
        ...(l.alias !== undefined ? { alias: l.alias } : {}),
        ...(l.inFrontmatter ? { frontmatter: true } : {}),
        resolved: r.resolved,
        ...(r.ambiguous ? { ambiguous: true, candidates: r.candidates } : {}),
        ...(r.via ? { via: r.via } : {}),
      };
    });
  }
  return out;
}

for (const name of readdirSync(ROOT)
  .filter((n) => existsSync(path.join(ROOT, n, 'vault')))
  .sort()) {
  t.test(name, async (t) => {
    const got = resolveVault(path.join(ROOT, name, 'vault'));
    const file = path.join(ROOT, name, 'expected.json');
    if (UPDATE || !existsSync(file)) writeFileSync(file, `${JSON.stringify(got, null, 2)}\n`);
    t.same(got, JSON.parse(readFileSync(file, 'utf8')));
  });
}
