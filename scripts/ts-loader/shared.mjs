// What the TypeScript loader (register.mjs, hooks.mjs) and its prebuild (build.mjs) agree on: where the
// compiled mirror lives and how one file is compiled, so a prebuilt file and one compiled on the fly match.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout's root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The compiled mirror: ROOT/x/y.ts compiles to MIRROR/x/y.js (ignored by git). */
export const MIRROR = path.join(ROOT, '.cache/ts');
/** The folders the prebuild compiles (everything else is compiled when first imported). */
export const PREBUILT = ['src', 'plugins', 'migrations', 'test', 'examples'];

const tsconfig = JSON.parse(readFileSync(path.join(ROOT, 'tsconfig.json'), 'utf8'));

/** esbuild's transform options for one source file (the same as `tsc`'s emit for this tsconfig, per file). */
export function transformOptions(file) {
  return {
    loader: 'ts',
    format: 'esm',
    target: `node${process.versions.node.split('.')[0]}`,
    sourcemap: 'inline',
    sourcesContent: false,
    sourcefile: file,
    tsconfigRaw: { compilerOptions: tsconfig.compilerOptions },
  };
}

/** The mirror file for a source under ROOT, or undefined for one outside it. */
export function mirrorOf(file) {
  const rel = path.relative(ROOT, file);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  return path.join(MIRROR, `${rel.slice(0, -3)}.js`);
}

/** Whether a mirror file was compiled from this very version of its source (build.mjs stamps it with the source's mtime). */
export function isCurrent(sourceStat, mirrorStat) {
  return mirrorStat !== undefined && Math.abs(mirrorStat.mtimeMs - sourceStat.mtimeMs) < 1;
}
