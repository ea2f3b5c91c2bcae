#!/usr/bin/env node
// Entry point: runs the compiled CLI when built (npm ci builds it), else the TypeScript sources via tsx.
import { existsSync } from 'node:fs';
import module from 'node:module';

// Node 22.1 and later keep V8's compiled code of each module on disk (in the temporary folder, or
// NODE_COMPILE_CACHE; NODE_DISABLE_COMPILE_CACHE=1 turns it off), so each later start compiles none of it
// again: what `exocortex stdio` costs each time a desktop client starts it. Node 20 has no such cache.
module.enableCompileCache?.();

const compiled = new URL('../dist/src/cli/main.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/cli/main.ts', import.meta.url).href);
}
