#!/usr/bin/env node
// Entry point: runs the compiled CLI when built (npm ci builds it), else the TypeScript sources via tsx.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/src/cli/main.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/cli/main.ts', import.meta.url).href);
}
