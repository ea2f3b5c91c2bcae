// Prebuild the TypeScript the tests run into the compiled mirror (shared.mjs): each file whose mirror is
// missing or was compiled from another version of the source, with esbuild, so the test processes' loader (hooks.mjs) only reads.
// Run by `npm test`; a file edited after it is compiled on the fly by the loader, never served stale.
import { mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { transform } from 'esbuild';
import { isCurrent, mirrorOf, PREBUILT, ROOT, transformOptions } from './shared.mjs';

const sources = [];
function walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(p);
    else if (entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) sources.push(p);
  }
}
for (const dir of PREBUILT) if (statSync(path.join(ROOT, dir), { throwIfNoEntry: false })) walk(path.join(ROOT, dir));

let compiled = 0;
await Promise.all(
  sources.map(async (file) => {
    const mirror = mirrorOf(file);
    const source = statSync(file);
    if (isCurrent(source, statSync(mirror, { throwIfNoEntry: false }))) return;
    const { code } = await transform(readFileSync(file, 'utf8'), transformOptions(file));
    mkdirSync(path.dirname(mirror), { recursive: true });
    writeFileSync(mirror, code);
    // Stamped with the source's mtime: the loader serves it only while the source still has that mtime.
    utimesSync(mirror, source.atimeMs / 1000, source.mtimeMs / 1000);
    compiled++;
  }),
);
console.log(
  `# ts-loader: ${compiled} of ${sources.length} TypeScript files compiled into ${path.relative(ROOT, path.dirname(mirrorOf(path.join(ROOT, 'x.ts'))))}/`,
);
