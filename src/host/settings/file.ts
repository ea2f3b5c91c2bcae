// The settings' file and environment, without their schema: the config file's YAML read into a raw
// mapping, EXO_ values parsed, raw mappings merged. Apart from load.ts (which validates against every
// section's zod schema) so that `exocortex stdio` relaying to a running server reads the few keys it needs
// without building the whole schema. Where the file is and how paths resolve is paths.ts's (no YAML there).

import { readFileSync } from 'node:fs';
import YAML from 'yaml';

export interface LoadOptions {
  readonly file?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Extra raw values merged over the file (tests). */
  readonly overrides?: Record<string, unknown>;
}

export class SettingsError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'SettingsError';
  }
}

/** The last config text parsed, and what it parsed to (a text that failed to parse is never kept). */
let lastParse: { text: string; value: Record<string, unknown> } | undefined;

export function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new SettingsError([
      `config file ${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? e}); pass an existing file with --config`,
    ]);
  }
  // `exocortex stdio` reads its file twice at start (the relay's three keys, then every setting when it
  // serves itself): the second read of the same text is a copy of the first parse (~20 ms of the start).
  if (lastParse?.text === text) return structuredClone(lastParse.value);
  const doc = YAML.parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    throw new SettingsError(doc.errors.map((e) => `${file}: YAML error: ${e.message.split('\n')[0]}`));
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 }) ?? {};
  } catch (e) {
    throw new SettingsError([`${file}: ${(e as Error).message}`]);
  }
  if (typeof value !== 'object' || Array.isArray(value))
    throw new SettingsError([`${file}: the top level must be a mapping of settings`]);
  lastParse = { text, value: structuredClone(value) as Record<string, unknown> };
  return value as Record<string, unknown>;
}

export function parseEnvValue(value: string): unknown {
  const trimmed = value.trim();
  if (trimmed === '') return '';
  if (/^(true|false|null|-?\d+(\.\d+)?)$/.test(trimmed) || trimmed.startsWith('[') || trimmed.startsWith('{')) {
    try {
      return YAML.parse(trimmed);
    } catch {
      return value;
    }
  }
  return value;
}

export function setPath(target: Record<string, unknown>, p: readonly string[], value: unknown): void {
  let cur = target;
  for (const part of p.slice(0, -1)) {
    if (!cur[part] || typeof cur[part] !== 'object') cur[part] = {};
    cur = cur[part] as Record<string, unknown>;
  }
  cur[p[p.length - 1]] = value;
}

export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b)
        ? deepMerge(b as Record<string, unknown>, v as Record<string, unknown>)
        : v;
  }
  return out;
}
