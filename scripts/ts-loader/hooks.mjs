// Module hooks (registered by register.mjs) that run the TypeScript sources: a relative `.js` import from
// a `.ts` module resolves to the `.ts` file beside it (NodeNext's convention), and a `.ts` module loads
// from the compiled mirror (build.mjs) when that was compiled from this version of the source, else is compiled here
// with esbuild. The module keeps its own file URL, so import.meta.url and paths built from it still name
// the source tree; the inline source map points stack traces at the TypeScript lines.
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isCurrent, mirrorOf, transformOptions } from './shared.mjs';

const isFileCache = new Map();
function isFile(file) {
  let known = isFileCache.get(file);
  if (known === undefined) {
    known = statSync(file, { throwIfNoEntry: false })?.isFile() ?? false;
    isFileCache.set(file, known);
  }
  return known;
}

export async function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL;
  if (
    parent?.endsWith('.ts') &&
    specifier.endsWith('.js') &&
    (specifier.startsWith('./') || specifier.startsWith('../'))
  ) {
    const url = new URL(`${specifier.slice(0, -3)}.ts`, parent);
    if (isFile(fileURLToPath(url))) return { url: url.href, format: 'module', shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

let esbuild;

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const file = fileURLToPath(url);
  const mirror = mirrorOf(file);
  if (mirror && isCurrent(statSync(file), statSync(mirror, { throwIfNoEntry: false }))) {
    return { format: 'module', source: readFileSync(mirror), shortCircuit: true };
  }
  esbuild ??= await import('esbuild');
  const { code } = esbuild.transformSync(readFileSync(file, 'utf8'), transformOptions(file));
  return { format: 'module', source: code, shortCircuit: true };
}
