// The bench scripts in bench/ and each one's usage line, read from its header comment. Used by the bench
// runner and by the test that keeps docs/performance.md listing every bench; reads files, runs nothing.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const BENCH_DIR = path.resolve(import.meta.dirname, '..');
const NOT_A_BENCH = new Set(['run-all']);

/** Bench names (file names without .ts), sorted. */
export function benchNames(): string[] {
  return readdirSync(BENCH_DIR)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.slice(0, -3))
    .filter((name) => !NOT_A_BENCH.has(name))
    .sort();
}

/**
 * The command and arguments from the `Usage:` line of the bench's header comment (continued on following lines
 * that start with `[`), without the notes after it; the plain command when the header names no usage.
 */
export function usageOf(name: string): string {
  const header = readFileSync(path.join(BENCH_DIR, `${name}.ts`), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('//'))
    .map((l) => l.replace(/^\/\/\s?/, ''));
  const at = header.findIndex((l) => l.includes('Usage:'));
  if (at < 0) return `tsx bench/${name}.ts`;
  const parts = [header[at].slice(header[at].indexOf('Usage:') + 'Usage:'.length)];
  for (let i = at + 1; i < header.length && /^\s+\[/.test(header[i]); i++) parts.push(header[i]);
  return parts.map((p) => p.trim().split(/\s{2,}|\s\(/)[0]).join(' ');
}

/** The environment variables the bench reads (`process.env.NAME`), sorted. */
export function envOf(name: string): string[] {
  const source = readFileSync(path.join(BENCH_DIR, `${name}.ts`), 'utf8');
  return [...new Set([...source.matchAll(/process\.env\.([A-Z_][A-Z0-9_]*)/g)].map((m) => m[1]))].sort();
}
